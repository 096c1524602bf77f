//! Backends from their spec strings: the agent, a model writer or person, a
//! judge, the caller's world.
//!
//! A model backend (`openai:…`, `anthropic:…`) is built before anything is
//! written, so a missing key or a bad setting leaves nothing behind; a command
//! starts later, inside the runtime. Keys come from the [`Env`] the caller
//! passes ([`Env::process`] reads the process environment).

use crate::error::{Error, Result};
use sparring_io::command_agent::CommandAgent;
use sparring_io::command_world::CommandWorld;
use sparring_io::log::RunLog;
use sparring_llm::{
    BackendOptions, BackendSpec, HttpWorld, Limiter, RetryPolicy, Sampling, model_agent,
};
use sparring_types::{Agent, ToolExecutor};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

type Lookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Where API keys are looked up by name (`OPENAI_API_KEY`, a `#key=VAR`).
#[derive(Clone)]
pub struct Env(Arc<Lookup>);

impl Env {
    /// The process environment.
    pub fn process() -> Self {
        Self(Arc::new(|name| std::env::var(name).ok()))
    }

    /// A lookup of the caller's (tests, a secrets store).
    pub fn from_fn(f: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    pub(crate) fn get(&self, name: &str) -> Option<String> {
        (self.0)(name)
    }
}

impl Default for Env {
    fn default() -> Self {
        Self::process()
    }
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Env")
    }
}

/// Parses the `writer` or `person` option: `None` for the templates.
pub(crate) fn role_spec(option: &str, value: Option<&str>) -> Result<Option<BackendSpec>> {
    match value.map(str::trim) {
        None => Ok(None),
        Some(v) if v == sparring_types::defaults::TEMPLATE => Ok(None),
        Some(v) => BackendSpec::parse(v).map(Some).map_err(|e| {
            Error::input(format!(
                "`{option}`: {e}\nhint: `template` is the offline {option}"
            ))
        }),
    }
}

/// How model backends of a run are built: one limiter shared by all of them.
pub(crate) struct ModelSettings<'a> {
    pub(crate) timeout: Duration,
    pub(crate) retries: u32,
    pub(crate) limiter: &'a Limiter,
    pub(crate) env: &'a Env,
}

/// The model agent for a backend spec that names a model; `None` for a
/// command (started later, inside the runtime).
pub(crate) fn build_model(
    role: &str,
    backend: &BackendSpec,
    sampling: Sampling,
    settings: &ModelSettings<'_>,
) -> Result<Option<Arc<dyn Agent>>> {
    let BackendSpec::Model(endpoint) = backend else {
        return Ok(None);
    };
    let resolved = endpoint
        .resolve(&|name| settings.env.get(name))
        .map_err(|e| Error::input(format!("`{role}`: {e}")))?;
    let options = BackendOptions {
        sampling,
        timeout: settings.timeout,
        retry: RetryPolicy::with_retries(settings.retries),
        limiter: settings.limiter.clone(),
    };
    Ok(Some(
        model_agent(resolved, options).map_err(|e| Error::input(format!("`{role}`: {e}")))?,
    ))
}

/// A backend of the run: the model built before, or the command started now.
/// `role` names what it plays (`agent`, `writer`, `person`) in the log and
/// in a command's errors.
pub(crate) async fn start(
    role: &'static str,
    spec: &BackendSpec,
    model: Option<Arc<dyn Agent>>,
    timeout: Duration,
    log: Option<&RunLog>,
) -> Result<Arc<dyn Agent>> {
    match (spec, model) {
        (_, Some(model)) => {
            if let Some(log) = log {
                log.line(&format!("{role}: {}", model.describe()));
            }
            Ok(model)
        }
        (BackendSpec::Command(command), None) => Ok(Arc::new(
            CommandAgent::start_as(role, command, timeout, log.cloned()).await?,
        )),
        (BackendSpec::Model(e), None) => Err(Error::input(format!(
            "the model backend `{}` could not be built",
            e.describe()
        ))),
    }
}

/// The caller's world named by `execute`: an HTTP world for an `http(s)://`
/// URL, else a command (`command:` prefix optional).
pub(crate) async fn start_world(
    execute: &str,
    timeout: Duration,
    log: Option<&RunLog>,
) -> Result<Arc<dyn ToolExecutor>> {
    if execute.starts_with("http://") || execute.starts_with("https://") {
        return Ok(Arc::new(
            HttpWorld::start(execute, timeout, log.map(RunLog::sink)).await?,
        ));
    }
    let command = execute.strip_prefix("command:").unwrap_or(execute);
    Ok(Arc::new(
        CommandWorld::start(command, timeout, log.cloned()).await?,
    ))
}
