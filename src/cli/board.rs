//! `loopc board [DIR]`: the terminal board. It owns the terminal (raw mode,
//! the alternate screen) and the key loop; what it shows comes from
//! [`loopc::run::board`], reloaded every two seconds. It reads files only and
//! never takes the run's lock. Exit 0 on `q`, 2 when there is no terminal or
//! no repository.

use super::{current_dir, exit, say};
use loopc::run::board::{self, Source, view};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How often the board reloads `.loopc/state.json`.
const REFRESH: Duration = Duration::from_secs(2);

/// `loopc board [DIR]`
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// A REEL spec tree (a directory with `todo/`, `inflight/`, … stage
    /// directories) to show by stage; otherwise a directory in the
    /// repository whose run to show (default: the current directory).
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Runs `loopc board`.
pub fn run(args: &Args) -> i32 {
    let cwd = match current_dir() {
        Ok(d) => d,
        Err(status) => return status,
    };
    let source = match board::source(&cwd, args.dir.as_deref()) {
        Ok(s) => s,
        Err(e) => {
            say(&e);
            return exit::USAGE;
        }
    };
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        say("loopc board needs a terminal\n\
             hint: to read the run's state from a script, use `loopc status` or `loopc status --json`");
        return exit::USAGE;
    }
    let mut terminal = match ratatui::try_init() {
        Ok(t) => t,
        Err(e) => {
            ratatui::restore();
            say(&format!("cannot open the terminal: {e}"));
            return exit::USAGE;
        }
    };
    let result = key_loop(&mut terminal, &source);
    ratatui::restore();
    match result {
        Ok(()) => exit::OK,
        Err(e) => {
            say(&format!("the board's terminal failed: {e}"));
            exit::USAGE
        }
    }
}

/// Draws, waits for a key or the next refresh, and repeats until `q`, Esc
/// or Ctrl-C; `r` reloads at once.
fn key_loop(terminal: &mut ratatui::DefaultTerminal, source: &Source) -> std::io::Result<()> {
    let mut shown = board::load(source);
    let mut selection = view::Selection::default();
    selection.settle(&shown);
    let mut loaded = Instant::now();
    let mut reload = false;
    loop {
        terminal.draw(|f| view::draw(f, &shown, &selection))?;
        let wait = REFRESH.saturating_sub(loaded.elapsed());
        if event::poll(wait)?
            && let Event::Key(key) = event::read()?
            && key.kind != KeyEventKind::Release
        {
            let step = match key.code {
                KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                    return Ok(());
                }
                KeyCode::Left | KeyCode::Char('h') => Some(view::Move::Left),
                KeyCode::Right | KeyCode::Char('l') => Some(view::Move::Right),
                KeyCode::Up | KeyCode::Char('k') => Some(view::Move::Up),
                KeyCode::Down | KeyCode::Char('j') => Some(view::Move::Down),
                KeyCode::Char('r') => {
                    reload = true;
                    None
                }
                _ => None,
            };
            if let Some(step) = step {
                selection.apply(&shown, step);
            }
        }
        if reload || loaded.elapsed() >= REFRESH {
            reload = false;
            shown = board::load(source);
            selection.settle(&shown);
            loaded = Instant::now();
        }
    }
}
