//! `loopc lsp`: the protocol, and real editors (Neovim) attached to it.

mod client;
mod editors;
mod nvim;
mod protocol;
