//! Starting the caller's programs (agent, world and grader commands): the
//! command line split like a shell would (quotes, no expansion) and shown
//! with its secrets redacted, the process spawned with piped stdin and
//! stdout, its stderr sent to the run's log.

use crate::Error;
use crate::command_agent::redact_command;
use crate::log::RunLog;
use std::process::Stdio;
use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// A command line, split into words.
#[derive(Debug, Clone)]
pub(crate) struct CommandLine {
    /// The words, program first.
    pub(crate) argv: Vec<String>,
    /// The words joined, secrets replaced by `***`: the only form that may
    /// reach logs and errors.
    pub(crate) display: String,
}

/// Where a started process's stderr goes.
pub(crate) enum Stderr<'a> {
    /// Each line to the run's log as `ROLE[pid] stderr: …` (drained
    /// unread without a log).
    Log {
        /// The run's log, if any.
        log: Option<&'a RunLog>,
        /// Names the process in the log: `agent`, `world`.
        role: &'a str,
    },
    /// The terminal's stderr, as sparring's own.
    Inherit,
}

/// A started process and its pipes.
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    /// The process id, or 0 once it has exited.
    pub(crate) pid: u32,
}

impl CommandLine {
    /// Splits `command` into words; an empty command or an unclosed quote is
    /// an error naming the command.
    pub(crate) fn parse(command: &str) -> Result<Self, Error> {
        let argv = shlex::split(command)
            .filter(|a| !a.is_empty())
            .ok_or_else(|| Error::Spawn {
                command: redact_command(
                    &command
                        .split_whitespace()
                        .map(str::to_owned)
                        .collect::<Vec<_>>(),
                ),
                message: "cannot split it into words (an unclosed quote?)".to_owned(),
            })?;
        Ok(Self {
            display: redact_command(&argv),
            argv,
        })
    }

    /// Starts the program (killed when its [`Child`] is dropped).
    pub(crate) fn spawn(&self, stderr: &Stderr<'_>) -> Result<Spawned, Error> {
        let spawn_error = |message: String| Error::Spawn {
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
                Stderr::Log { .. } => Stdio::piped(),
                Stderr::Inherit => Stdio::inherit(),
            })
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => spawn_error(format!("`{program}` not found")),
                std::io::ErrorKind::PermissionDenied => {
                    spawn_error(format!("`{program}` is not executable"))
                }
                _ => spawn_error(e.to_string().to_lowercase()),
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(spawn_error(
                "its standard streams could not be opened".to_owned(),
            ));
        };
        let pid = child.id().unwrap_or(0);
        if let Stderr::Log { log, role } = stderr {
            let Some(err) = child.stderr.take() else {
                return Err(spawn_error(
                    "its standard streams could not be opened".to_owned(),
                ));
            };
            let log = log.cloned();
            let role = (*role).to_owned();
            tokio::spawn(async move {
                let mut lines = BufReader::new(err).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Some(log) = &log {
                        log.line(&format!("{role}[{pid}] stderr: {line}"));
                    }
                }
            });
        }
        Ok(Spawned {
            child,
            stdin,
            stdout,
            pid,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{CommandLine, Stderr};

    #[test]
    fn command_lines_split_and_redact() {
        let line = CommandLine::parse("python3 agent.py --api-key sk-abc 'two words'").unwrap();
        assert_eq!(line.argv.len(), 5);
        assert_eq!(line.argv[4], "two words");
        assert!(!line.display.contains("sk-abc"), "{}", line.display);
        let err = CommandLine::parse("agent --token hunter2 'unclosed")
            .unwrap_err()
            .to_string();
        assert!(err.contains("unclosed quote"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert!(CommandLine::parse("   ").is_err());
    }

    #[tokio::test]
    async fn missing_programs_are_named() {
        let line = CommandLine::parse("sparring-no-such-program --token hunter2").unwrap();
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
}
