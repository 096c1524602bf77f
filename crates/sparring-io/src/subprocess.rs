//! Starting the caller's programs (agent, world and grader commands): the
//! command line split like a shell would (quotes, no expansion) and shown
//! with its secrets redacted, the process spawned with piped stdin and
//! stdout, its stderr sent to the run's log.

use crate::Error;
use crate::command_agent::redact_command;
use crate::log::RunLog;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// A command line, split into words.
#[derive(Debug, Clone)]
pub(crate) struct CommandLine {
    /// What the command plays (`agent`, `world`, `grader`), for errors.
    pub(crate) role: &'static str,
    /// The words, program first.
    pub(crate) argv: Vec<String>,
    /// The words joined, secrets replaced by `***`: the only form that may
    /// reach logs and errors.
    pub(crate) display: String,
}

/// Where a started process's stderr goes.
pub(crate) enum Stderr {
    /// A pipe, handed back in [`Spawned::stderr`] for [`forward_stderr`]
    /// once the caller has logged the start.
    Log,
    /// The terminal's stderr, as sparring's own.
    Inherit,
}

/// A started process and its pipes.
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    /// The stderr pipe, with [`Stderr::Log`].
    pub(crate) stderr: Option<ChildStderr>,
    /// The process id, or 0 once it has exited.
    pub(crate) pid: u32,
}

/// Sends each line of a process's stderr to the run's log as
/// `ROLE[pid] stderr: …` (bytes that are not UTF-8 shown as `�`), or drains
/// it unread without a log: a full pipe would block the process.
pub(crate) fn forward_stderr(stderr: ChildStderr, log: Option<RunLog>, role: &str, pid: u32) {
    let role = role.to_owned();
    tokio::spawn(async move {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if let Some(log) = &log {
                        let text = String::from_utf8_lossy(&line);
                        let text = text.trim_end_matches(['\n', '\r']);
                        log.line(&format!("{role}[{pid}] stderr: {text}"));
                    }
                }
            }
        }
    });
}

impl CommandLine {
    /// Splits `command` into words; an empty command or an unclosed quote is
    /// an error naming the command.
    pub(crate) fn parse(command: &str, role: &'static str) -> Result<Self, Error> {
        let argv = shlex::split(command)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| Error::Spawn {
                role,
                // Words cannot be told apart here, so nothing past the
                // first is shown: a quoted secret must not slip through.
                command: match command.split_whitespace().next() {
                    Some(first) if command.trim() != first => {
                        format!("{} …", redact_command(&[first.to_owned()]))
                    }
                    _ => redact_command(&[command.trim().to_owned()]),
                },
                message: "cannot split it into words (an unclosed quote?)".to_owned(),
            })?;
        Ok(Self {
            role,
            display: redact_command(&argv),
            argv,
        })
    }

    /// Starts the program (killed when its [`Child`] is dropped).
    pub(crate) fn spawn(&self, stderr: &Stderr) -> Result<Spawned, Error> {
        let spawn_error = |message: String| Error::Spawn {
            role: self.role,
            command: self.display.clone(),
            message,
        };
        let program = self
            .argv
            .first()
            .ok_or_else(|| spawn_error("the command is empty".to_owned()))?;
        let mut child = Command::new(program)
            .args(&self.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match stderr {
                Stderr::Log => Stdio::piped(),
                Stderr::Inherit => Stdio::inherit(),
            })
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                let shown = redact_command(std::slice::from_ref(program));
                match e.kind() {
                    std::io::ErrorKind::NotFound => spawn_error(format!("`{shown}` not found")),
                    std::io::ErrorKind::PermissionDenied => {
                        spawn_error(format!("`{shown}` is not executable"))
                    }
                    _ => spawn_error(e.to_string().to_lowercase()),
                }
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(spawn_error(
                "its standard streams could not be opened".to_owned(),
            ));
        };
        let pid = child.id().unwrap_or(0);
        let stderr = match stderr {
            Stderr::Log => Some(child.stderr.take().ok_or_else(|| {
                spawn_error("its standard streams could not be opened".to_owned())
            })?),
            Stderr::Inherit => None,
        };
        Ok(Spawned {
            child,
            stdin,
            stdout,
            stderr,
            pid,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{CommandLine, Stderr, forward_stderr};
    use crate::log::RunLog;

    #[test]
    fn command_lines_split_and_redact() {
        let line =
            CommandLine::parse("python3 agent.py --api-key sk-abc 'two words'", "agent").unwrap();
        assert_eq!(line.argv.len(), 5);
        assert_eq!(line.argv[4], "two words");
        assert!(!line.display.contains("sk-abc"), "{}", line.display);
        let err = CommandLine::parse("agent --token hunter2 'unclosed", "agent")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unclosed quote"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        for quoted in [
            "agent \"sk-abc\" 'x",
            "agent \"--token\" hunter2 'x",
            "agent --api-key \"sk-a hunter2 'x",
        ] {
            let err = CommandLine::parse(quoted, "agent").unwrap_err().to_string();
            assert!(
                err.contains("cannot start agent command `agent …`"),
                "{err}"
            );
            assert!(!err.contains("sk-a") && !err.contains("hunter2"), "{err}");
        }
        assert!(CommandLine::parse("   ", "agent").is_err());
    }

    #[tokio::test]
    async fn missing_programs_are_named() {
        let line = CommandLine::parse("sparring-no-such-program --token hunter2", "world").unwrap();
        let key = CommandLine::parse("OPENAI_API_KEY=sk-1 agent", "agent").unwrap();
        let err = key
            .spawn(&Stderr::Inherit)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("`OPENAI_API_KEY=***` not found"), "{err}");
        assert!(!err.contains("sk-1"), "{err}");
        let err = line
            .spawn(&Stderr::Inherit)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("`sparring-no-such-program` not found"),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[tokio::test]
    async fn stderr_lines_reach_the_log_even_when_not_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let log = RunLog::create(&dir.path().join("run.log")).unwrap();
        let line =
            CommandLine::parse(r#"sh -c 'printf "\377bad\nsecond\n" >&2'"#, "agent").unwrap();
        let mut spawned = line.spawn(&Stderr::Log).unwrap();
        let stderr = spawned.stderr.take().unwrap();
        forward_stderr(stderr, Some(log.clone()), "world", spawned.pid);
        spawned.child.wait().await.unwrap();
        let mut text = String::new();
        for _ in 0..100 {
            text = std::fs::read_to_string(log.path()).unwrap();
            if text.contains("second") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(text.contains("stderr: \u{fffd}bad"), "{text}");
        assert!(text.contains("stderr: second"), "{text}");
    }
}
