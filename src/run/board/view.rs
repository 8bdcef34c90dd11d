//! Drawing a [`Board`] into a ratatui frame, and the selection a person
//! moves over it. Nothing here touches the terminal: the command line owns
//! it and calls [`draw`] on every refresh and key.

use super::{Board, Card};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, List, ListItem, ListState, Paragraph, Wrap};

/// Which card is selected: its column, and its name so the selection
/// follows a task from column to column as its state changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// The selected column's index.
    pub column: usize,
    /// The selected card's index in that column.
    pub card: usize,
    /// The selected card's name, if a card was selected.
    pub name: Option<String>,
}

/// A move of the selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// One column to the left (skipping empty ones).
    Left,
    /// One column to the right (skipping empty ones).
    Right,
    /// One card up.
    Up,
    /// One card down.
    Down,
}

impl Selection {
    /// Puts the selection back on `board` after a refresh: on the card of
    /// the same name wherever it is now, else at the same place clamped to
    /// what is there, else on the first card of the first column with any.
    pub fn settle(&mut self, board: &Board) {
        if let Some(name) = &self.name {
            for (c, column) in board.columns.iter().enumerate() {
                if let Some(i) = column.cards.iter().position(|card| &card.name == name) {
                    self.column = c;
                    self.card = i;
                    return;
                }
            }
        }
        let here = board.columns.get(self.column).map_or(0, |c| c.cards.len());
        if here == 0 {
            match board.columns.iter().position(|c| !c.cards.is_empty()) {
                Some(c) => {
                    self.column = c;
                    self.card = 0;
                }
                None => {
                    self.card = 0;
                    self.name = None;
                    return;
                }
            }
        } else {
            self.card = self.card.min(here - 1);
        }
        self.name = self.selected(board).map(|card| card.name.clone());
    }

    /// Moves the selection on `board`.
    pub fn apply(&mut self, board: &Board, step: Move) {
        let columns = &board.columns;
        match step {
            Move::Up => self.card = self.card.saturating_sub(1),
            Move::Down => self.card += 1,
            Move::Left => {
                if let Some(c) = (0..self.column)
                    .rev()
                    .find(|&c| !columns[c].cards.is_empty())
                {
                    self.column = c;
                }
            }
            Move::Right => {
                if let Some(c) =
                    (self.column + 1..columns.len()).find(|&c| !columns[c].cards.is_empty())
                {
                    self.column = c;
                }
            }
        }
        self.name = None;
        self.settle(board);
    }

    /// The selected card, if any.
    pub fn selected<'b>(&self, board: &'b Board) -> Option<&'b Card> {
        board.columns.get(self.column)?.cards.get(self.card)
    }
}

/// The colour of a task state or stage word.
fn colour(status: &str) -> Color {
    match status {
        "running" => Color::Yellow,
        "passed" | "cached" | "archived" => Color::Green,
        "failed" | "blocked" | "interrupted" => Color::Red,
        "skipped" => Color::DarkGray,
        _ => Color::Reset,
    }
}

/// The help line at the bottom.
pub const HELP: &str = "←/→ column · ↑/↓ card · q quit · refreshes every 2 s";

/// Draws `board` with `selection` into `frame`: the heading, the columns of
/// cards, the selected card's details and the help line.
pub fn draw(frame: &mut Frame<'_>, board: &Board, selection: &Selection) {
    let [top, middle, bottom, help] = Layout::vertical([
        Constraint::Length(2),
        Constraint::Min(5),
        Constraint::Length(9),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    let mut heading = vec![Line::from(Span::styled(
        board.heading.as_str(),
        Style::new().add_modifier(Modifier::BOLD),
    ))];
    if let Some(notice) = &board.notice {
        heading.push(Line::from(notice.as_str()));
    }
    frame.render_widget(Paragraph::new(heading), top);
    draw_columns(frame, board, selection, middle);
    draw_details(frame, selection.selected(board), bottom);
    frame.render_widget(
        Paragraph::new(HELP).style(Style::new().fg(Color::DarkGray)),
        help,
    );
}

fn draw_columns(frame: &mut Frame<'_>, board: &Board, selection: &Selection, area: Rect) {
    if board.columns.is_empty() {
        return;
    }
    let areas = Layout::horizontal(
        board
            .columns
            .iter()
            .map(|_| Constraint::Ratio(1, board.columns.len() as u32)),
    )
    .split(area);
    for (c, (column, area)) in board.columns.iter().zip(areas.iter()).enumerate() {
        let items: Vec<ListItem> = column
            .cards
            .iter()
            .map(|card| {
                let mut lines = vec![Line::from(Span::styled(
                    card.name.as_str(),
                    Style::new().fg(colour(&card.status)),
                ))];
                if let Some(title) = &card.title {
                    lines.push(Line::from(format!("  {title}")));
                }
                ListItem::new(lines)
            })
            .collect();
        let selected = c == selection.column;
        let block = Block::bordered()
            .title(format!(" {} ({}) ", column.name, column.cards.len()))
            .border_style(if selected {
                Style::new().fg(Color::Cyan)
            } else {
                Style::new()
            });
        let list = List::new(items)
            .block(block)
            .highlight_symbol("> ")
            .highlight_style(Style::new().add_modifier(Modifier::REVERSED));
        let mut state = ListState::default();
        if selected && !column.cards.is_empty() {
            state.select(Some(selection.card));
        }
        frame.render_stateful_widget(list, *area, &mut state);
    }
}

fn draw_details(frame: &mut Frame<'_>, card: Option<&Card>, area: Rect) {
    let (title, lines) = match card {
        Some(card) => (
            format!(" {} ", card.name),
            card.details
                .iter()
                .map(|(label, value)| {
                    Line::from(vec![
                        Span::styled(format!("{label}: "), Style::new().fg(Color::Cyan)),
                        Span::raw(value.as_str()),
                    ])
                })
                .collect(),
        ),
        None => (" nothing selected ".to_string(), Vec::new()),
    };
    // A long value (a failure's reason) wraps onto the lines below it
    // instead of being cut at the border.
    frame.render_widget(
        Paragraph::new(lines)
            .block(Block::bordered().title(title))
            .wrap(Wrap { trim: false }),
        area,
    );
}

#[cfg(test)]
mod tests {
    use super::super::Column;
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn card(name: &str, status: &str) -> Card {
        Card {
            name: name.into(),
            title: Some(format!("title of {name}")),
            status: status.into(),
            details: vec![("attempts".into(), "2".into())],
        }
    }

    fn board(columns: &[(&str, &[&str])]) -> Board {
        Board {
            heading: "plan p: running".into(),
            notice: None,
            columns: columns
                .iter()
                .map(|(name, cards)| Column {
                    name: (*name).into(),
                    cards: cards.iter().map(|c| card(c, name)).collect(),
                })
                .collect(),
        }
    }

    #[test]
    fn the_selection_follows_a_card_to_its_new_column() {
        let before = board(&[("pending", &["a", "b"]), ("running", &[]), ("passed", &[])]);
        let mut sel = Selection::default();
        sel.settle(&before);
        sel.apply(&before, Move::Down);
        assert_eq!(sel.name.as_deref(), Some("b"));
        let after = board(&[("pending", &["a"]), ("running", &["b"]), ("passed", &[])]);
        sel.settle(&after);
        assert_eq!((sel.column, sel.card), (1, 0));
    }

    #[test]
    fn moves_skip_empty_columns_and_stay_inside_the_board() {
        let b = board(&[
            ("pending", &["a"]),
            ("running", &[]),
            ("passed", &["c", "d"]),
        ]);
        let mut sel = Selection::default();
        sel.settle(&b);
        sel.apply(&b, Move::Right);
        assert_eq!(sel.name.as_deref(), Some("c"));
        sel.apply(&b, Move::Down);
        sel.apply(&b, Move::Down);
        assert_eq!(sel.name.as_deref(), Some("d"));
        sel.apply(&b, Move::Right);
        assert_eq!(sel.name.as_deref(), Some("d"));
        sel.apply(&b, Move::Left);
        assert_eq!(sel.name.as_deref(), Some("a"));
        sel.apply(&b, Move::Up);
        assert_eq!(sel.name.as_deref(), Some("a"));
    }

    #[test]
    fn an_empty_board_selects_nothing() {
        let b = board(&[("pending", &[]), ("running", &[])]);
        let mut sel = Selection::default();
        sel.settle(&b);
        assert_eq!(sel.selected(&b), None);
        assert_eq!(sel.name, None);
    }

    /// The board `b` with selection `sel`, drawn on a 60×20 screen, a line a row.
    fn drawn(b: &Board, sel: &Selection) -> String {
        let mut terminal = Terminal::new(TestBackend::new(60, 20)).unwrap();
        terminal.draw(|f| draw(f, b, sel)).unwrap();
        terminal
            .backend()
            .buffer()
            .content()
            .chunks(60)
            .map(|row| row.iter().map(|c| c.symbol()).collect::<String>() + "\n")
            .collect()
    }

    #[test]
    fn draws_columns_cards_and_the_selected_cards_details() {
        let b = board(&[("pending", &["a"]), ("running", &["b"])]);
        let mut sel = Selection::default();
        sel.settle(&b);
        sel.apply(&b, Move::Right);
        let screen = drawn(&b, &sel);
        assert!(screen.contains("plan p: running"), "{screen}");
        assert!(screen.contains(" pending (1) "), "{screen}");
        assert!(screen.contains("> b"), "{screen}");
        assert!(screen.contains("attempts: 2"), "{screen}");
    }

    #[test]
    fn a_long_reason_wraps_in_the_details() {
        let mut b = board(&[("failed", &["a"])]);
        let why =
            "the attempt failed because the gate said the output was wrong in ways nobody expected";
        b.columns[0].cards[0]
            .details
            .push(("why".into(), why.into()));
        let mut sel = Selection::default();
        sel.settle(&b);
        let screen = drawn(&b, &sel);
        assert!(screen.contains("nobody expected"), "{screen}");
    }
}
