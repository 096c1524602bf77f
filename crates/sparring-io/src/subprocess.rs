//! Starting the caller's programs (agent, world, grader, judge and writer
//! commands): the command line split like a shell would (quotes, no
//! expansion) and shown with its secrets redacted ([`crate::redact`]), the
//! process spawned with piped stdin and stdout, its stderr sent line by line
//! to the run's log (or, without one, to sparring's stderr), prefixed and
//! with the command line's secrets masked.
//!
//! Every process runs in a process group of its own, so the terminal's
//! Ctrl-C reaches sparring only (sparring decides what happens to the
//! rollouts in flight). The group dies with sparring: a small watchdog (`sh`,
//! a member of the group) waits on a pipe that only sparring holds, and when
//! that pipe closes (sparring dropped the process, exited, or was killed,
//! even with `SIGKILL`) it kills the whole group, so no grandchild of a
//! wrapper script outlives the run either. `PR_SET_PDEATHSIG` would need
//! `unsafe` (`pre_exec`) and kills only the direct child; the watchdog needs
//! neither. On other platforms the direct child is killed on drop.

use crate::Error;
use crate::log::RunLog;
use crate::redact::{mask, redact_argv};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// A command line, split into words.
#[derive(Debug, Clone)]
pub(crate) struct CommandLine {
    /// What the command plays (`agent`, `world`, `grader`, `judge`,
    /// `writer`), for errors and log lines.
    pub(crate) role: &'static str,
    /// The words, program first.
    pub(crate) argv: Vec<String>,
    /// The words joined, secrets replaced by `***`: the only form that may
    /// reach logs and errors.
    pub(crate) display: String,
    /// The values hidden from `display`, masked in what the process prints
    /// on stderr.
    pub(crate) secrets: Arc<Vec<String>>,
}

/// Where the lines a process writes on stderr go.
#[derive(Clone, Debug)]
pub(crate) enum StderrTo {
    /// The run's log.
    Log(RunLog),
    /// sparring's own stderr (commands started outside a run: judges,
    /// graders, `asks` writers).
    Terminal,
}

impl StderrTo {
    pub(crate) fn from_log(log: Option<RunLog>) -> Self {
        log.map_or(Self::Terminal, Self::Log)
    }

    /// Writes one line.
    pub(crate) fn line(&self, text: &str) {
        match self {
            Self::Log(log) => log.line(text),
            Self::Terminal => eprintln!("{text}"),
        }
    }
}

/// A started process and its pipes (its stderr is forwarded:
/// [`CommandLine::start`]).
pub(crate) struct Spawned {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
    /// The process id, or 0 once it has exited.
    pub(crate) pid: u32,
    /// The process group's watchdog: dropping it kills the group.
    pub(crate) group: Group,
}

/// The process group of a started process. Dropping it (or calling
/// [`Group::kill`]) kills every process in the group.
pub(crate) struct Group {
    #[cfg(unix)]
    watchdog: Option<ChildStdin>,
}

impl Group {
    /// Kills every process of the group (the watchdog does it as soon as
    /// its pipe closes).
    pub(crate) fn kill(&mut self) {
        #[cfg(unix)]
        drop(self.watchdog.take());
    }
}

/// The watchdog's script: block until the pipe from sparring closes, then
/// kill the process group it belongs to (itself included).
#[cfg(unix)]
const WATCHDOG: &str = "read -r _; kill -9 0";

/// Puts a watchdog into the group of `pid` (which leads its own group).
#[cfg(unix)]
fn watch_group(pid: u32) -> std::io::Result<Group> {
    let group = i32::try_from(pid).map_err(|_| std::io::Error::other("process id out of range"))?;
    let mut watchdog = Command::new("/bin/sh")
        .args(["-c", WATCHDOG])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(group)
        // It must outlive its handle: its own exit is the group's end.
        .kill_on_drop(false)
        .spawn()?;
    let stdin = watchdog
        .stdin
        .take()
        .ok_or_else(|| std::io::Error::other("the watchdog has no stdin"))?;
    Ok(Group {
        watchdog: Some(stdin),
    })
}

#[cfg(not(unix))]
fn watch_group(_pid: u32) -> std::io::Result<Group> {
    Ok(Group {})
}

/// Whether an IO error means the process ran out of file descriptors
/// (`EMFILE`, `ENFILE`), which no retry or reconnect can fix.
pub(crate) fn out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(23 | 24))
}

/// The hint that goes with [`out_of_descriptors`].
pub(crate) const OUT_OF_DESCRIPTORS: &str = "sparring ran out of file descriptors (too many open files); raise `ulimit -n` or lower `--concurrency`";

/// Sends each line of a process's stderr to `to` as `ROLE[pid] stderr: …`
/// (bytes that are not UTF-8 shown as `\u{fffd}`, the command line's secrets
/// masked). The pipe is always drained: a full pipe would block the process.
fn forward_stderr(
    stderr: ChildStderr,
    to: StderrTo,
    role: &str,
    pid: u32,
    secrets: Arc<Vec<String>>,
) {
    let role = role.to_owned();
    tokio::spawn(async move {
        let mut reader = BufReader::new(stderr);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let text = String::from_utf8_lossy(&line);
                    let text = mask(text.trim_end_matches(['\n', '\r']), &secrets);
                    to.line(&format!("{role}[{pid}] stderr: {text}"));
                }
            }
        }
    });
}

/// Why a line could not be written to a process.
pub(crate) enum WriteError {
    /// The process did not read its input within the time allowed (its
    /// stdin pipe is full).
    Timeout,
    /// The pipe broke (the process exited).
    Io(String),
}

/// Why a command hook (the caller's world, a grader) gave no usable answer
/// to one request; its process is replaced. `role` names the hook in the
/// message (`world`, `grader`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ExchangeError {
    /// The pipe broke while writing the request.
    #[error("cannot write to the {role}: {message}")]
    Write {
        role: &'static str,
        /// What went wrong, lowercase.
        message: String,
    },
    /// The process did not read its input within `limit`.
    #[error("the {role} did not read its input for {} s", .limit.as_secs_f64())]
    Unread { role: &'static str, limit: Duration },
    /// Its output could not be read.
    #[error("cannot read the {role}: {error}")]
    Read {
        role: &'static str,
        error: std::io::Error,
    },
    /// The process exited, with its status when it is known.
    #[error("the {role} process exited{}", .status.map(|s| format!(" ({s})")).unwrap_or_default())]
    Exited {
        role: &'static str,
        status: Option<std::process::ExitStatus>,
    },
    /// No process to ask.
    #[error("the {role} process is not running")]
    NotRunning { role: &'static str },
    /// A line that is not UTF-8: its first 120 characters, lossily.
    #[error("the {role} printed a line that is not UTF-8: `{shown}`")]
    NotUtf8 { role: &'static str, shown: String },
    /// A line that is not JSON: its first 120 characters.
    #[error("the {role} printed a line that is not JSON: `{shown}`")]
    NotJson { role: &'static str, shown: String },
    /// No answer within `limit`.
    #[error("the {role} did not answer within {} s", .limit.as_secs_f64())]
    Timeout { role: &'static str, limit: Duration },
}

impl ExchangeError {
    /// The error of a request `role` could not be given within `limit`.
    pub(crate) fn unwritten(role: &'static str, e: WriteError, limit: Duration) -> Self {
        match e {
            WriteError::Io(message) => Self::Write { role, message },
            WriteError::Timeout => Self::Unread { role, limit },
        }
    }

    /// The error of a line `role` printed that is not JSON.
    pub(crate) fn not_json(role: &'static str, line: &str) -> Self {
        Self::NotJson {
            role,
            shown: line.chars().take(120).collect(),
        }
    }
}

/// Writes `line` and flushes it, within `limit`: a process that stops
/// reading must not block sparring for ever.
pub(crate) async fn write_within(
    stdin: &mut ChildStdin,
    line: &[u8],
    limit: Duration,
) -> Result<(), WriteError> {
    let write = async {
        stdin.write_all(line).await?;
        stdin.flush().await
    };
    match tokio::time::timeout(limit, write).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(WriteError::Io(e.to_string().to_lowercase())),
        Err(_) => Err(WriteError::Timeout),
    }
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
                        format!("{} …", redact_argv(&[first.to_owned()]).display)
                    }
                    _ => redact_argv(&[command.trim().to_owned()]).display,
                },
                message: "cannot split it into words (an unclosed quote?)".to_owned(),
            })?;
        let redacted = redact_argv(&argv);
        Ok(Self {
            role,
            display: redacted.display,
            secrets: Arc::new(redacted.secrets),
            argv,
        })
    }

    /// Starts the program as [`CommandLine::spawn`] does and forwards its
    /// stderr to `to`, secrets masked. With a run log, the log first says
    /// the process started (`ROLE: started `CMD` (pid N, start K)`, the
    /// start counted only when `start` is given).
    pub(crate) fn start(&self, to: StderrTo, start: Option<u64>) -> Result<Spawned, Error> {
        let (spawned, stderr) = self.spawn()?;
        if let StderrTo::Log(log) = &to {
            let start = start.map(|n| format!(", start {n}")).unwrap_or_default();
            log.line(&format!(
                "{}: started `{}` (pid {}{start})",
                self.role, self.display, spawned.pid
            ));
        }
        forward_stderr(
            stderr,
            to,
            self.role,
            spawned.pid,
            Arc::clone(&self.secrets),
        );
        Ok(spawned)
    }

    /// Starts the program in a process group of its own (killed, with the
    /// whole group, when its [`Spawned`] is dropped); its stderr is the
    /// caller's to read.
    fn spawn(&self) -> Result<(Spawned, ChildStderr), Error> {
        let spawn_error = |message: String| Error::Spawn {
            role: self.role,
            command: self.display.clone(),
            message,
        };
        let program = self
            .argv
            .first()
            .ok_or_else(|| spawn_error("the command is empty".to_owned()))?;
        let mut command = Command::new(program);
        command
            .args(&self.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| {
            let shown = redact_argv(std::slice::from_ref(program)).display;
            match e.kind() {
                std::io::ErrorKind::NotFound => spawn_error(format!("`{shown}` not found")),
                std::io::ErrorKind::PermissionDenied => {
                    spawn_error(format!("`{shown}` is not executable"))
                }
                _ if out_of_descriptors(&e) => spawn_error(OUT_OF_DESCRIPTORS.to_owned()),
                _ => spawn_error(e.to_string().to_lowercase()),
            }
        })?;
        let pid = child.id().unwrap_or(0);
        let group = watch_group(pid).map_err(|e| {
            let _ = child.start_kill();
            if out_of_descriptors(&e) {
                spawn_error(OUT_OF_DESCRIPTORS.to_owned())
            } else {
                spawn_error(format!(
                    "cannot watch its process group: {}",
                    e.to_string().to_lowercase()
                ))
            }
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(spawn_error(
                "its standard streams could not be opened".to_owned(),
            ));
        };
        Ok((
            Spawned {
                child,
                stdin,
                stdout,
                pid,
                group,
            },
            stderr,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{CommandLine, ExchangeError, StderrTo, WriteError};
    use crate::log::RunLog;
    use std::time::Duration;

    #[test]
    fn a_failed_exchange_says_what_and_with_whom() {
        let limit = Duration::from_millis(2500);
        let said = |e: ExchangeError| e.to_string();
        assert_eq!(
            said(ExchangeError::unwritten(
                "world",
                WriteError::Io("broken pipe".to_owned()),
                limit
            )),
            "cannot write to the world: broken pipe"
        );
        assert_eq!(
            said(ExchangeError::unwritten(
                "grader",
                WriteError::Timeout,
                limit
            )),
            "the grader did not read its input for 2.5 s"
        );
        assert_eq!(
            said(ExchangeError::Exited {
                role: "world",
                status: None
            }),
            "the world process exited"
        );
        assert_eq!(
            said(ExchangeError::not_json("grader", &"x".repeat(200))),
            format!(
                "the grader printed a line that is not JSON: `{}`",
                "x".repeat(120)
            )
        );
        assert_eq!(
            said(ExchangeError::Timeout {
                role: "world",
                limit
            }),
            "the world did not answer within 2.5 s"
        );
        assert_eq!(
            said(ExchangeError::NotRunning { role: "world" }),
            "the world process is not running"
        );
    }

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
        let err = key.spawn().err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.contains("`OPENAI_API_KEY=***` not found"), "{err}");
        assert!(!err.contains("sk-1"), "{err}");
        let err = line
            .spawn()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("`sparring-no-such-program` not found"),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
    }

    async fn log_text_with(log: &RunLog, needle: &str) -> String {
        let mut text = String::new();
        for _ in 0..200 {
            text = std::fs::read_to_string(log.path()).unwrap();
            if text.contains(needle) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        text
    }

    #[tokio::test]
    async fn stderr_lines_reach_the_log_even_when_not_utf8() {
        let dir = tempfile::tempdir().unwrap();
        let log = RunLog::create(&dir.path().join("run.log")).unwrap();
        let line =
            CommandLine::parse(r#"sh -c 'printf "\377bad\nsecond\n" >&2'"#, "agent").unwrap();
        let mut spawned = line.start(StderrTo::Log(log.clone()), None).unwrap();
        spawned.child.wait().await.unwrap();
        let text = log_text_with(&log, "stderr: second").await;
        assert!(text.contains("stderr: \u{fffd}bad"), "{text}");
        assert!(text.contains("stderr: second"), "{text}");
    }

    /// An agent that prints its own command line's secret on stderr: the
    /// log shows `***` (a long key anywhere, a short one as a whole word).
    #[tokio::test]
    async fn secrets_the_process_echoes_are_masked_in_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = RunLog::create(&dir.path().join("run.log")).unwrap();
        // `sh -c SCRIPT NAME ARGS…`: the script sees `--api-key KEY --token x`
        // as $1..$4 and prints the two secrets on stderr.
        let line = CommandLine::parse(
            r#"sh -c 'echo "key $2 then $4 in xylophone" >&2' sh --api-key opensesame-42 --token x"#,
            "agent",
        )
        .unwrap();
        assert!(!line.display.contains("opensesame"), "{}", line.display);
        let mut spawned = line.start(StderrTo::Log(log.clone()), None).unwrap();
        spawned.child.wait().await.unwrap();
        let text = log_text_with(&log, "stderr: key").await;
        assert!(
            text.contains("stderr: key *** then *** in xylophone"),
            "{text}"
        );
        assert!(!text.contains("opensesame"), "{text}");
    }

    /// Whether a process is gone (no such process, or a zombie waiting to
    /// be reaped by whoever adopted it).
    #[cfg(target_os = "linux")]
    fn gone(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
        }
    }

    /// A wrapper whose child keeps running (and keeps stdout open): dropping
    /// the process kills the grandchild too, and the group never saw the
    /// terminal's signals because it is not sparring's group.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn dropping_a_process_kills_its_whole_group() {
        use tokio::io::AsyncBufReadExt as _;
        let line = CommandLine::parse("sh -c 'sleep 300 & echo $!; wait'", "agent").unwrap();
        let (spawned, _stderr) = line.spawn().unwrap();
        let leader = spawned.pid;
        let mut lines = tokio::io::BufReader::new(spawned.stdout).lines();
        let grandchild: u32 = lines.next_line().await.unwrap().unwrap().parse().unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap();
        let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split(' ').collect();
        assert_eq!(
            fields[2],
            leader.to_string(),
            "the grandchild is in the leader's group"
        );
        let own = std::fs::read_to_string("/proc/self/stat").unwrap();
        let own_group = own
            .rsplit_once(") ")
            .unwrap()
            .1
            .split(' ')
            .nth(2)
            .unwrap()
            .to_owned();
        assert_ne!(fields[2], own_group, "not in sparring's group");
        drop(spawned.child);
        drop(spawned.group);
        for _ in 0..200 {
            if gone(grandchild) && gone(leader) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert!(gone(leader), "the leader survived");
        assert!(gone(grandchild), "the grandchild survived");
    }

    /// The watchdog's cost: `cargo test -p sparring-io --lib spawn_cost --
    /// --ignored --nocapture` prints the time to start (and end) a process
    /// with its group watched, against a bare spawn (docs/reliability.md).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "a measurement, not a check"]
    async fn spawn_cost() {
        const N: u32 = 200;
        let line = CommandLine::parse("true", "agent").unwrap();
        let started = std::time::Instant::now();
        for _ in 0..N {
            let (mut spawned, _stderr) = line.spawn().unwrap();
            spawned.child.wait().await.unwrap();
        }
        let watched = started.elapsed() / N;
        let started = std::time::Instant::now();
        for _ in 0..N {
            let mut child = tokio::process::Command::new("true")
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.wait().await.unwrap();
        }
        let bare = started.elapsed() / N;
        println!("spawn and wait, {N} times: watched group {watched:?} each, bare {bare:?} each");
    }
}
