//! # kiln
//!
//! The Kiln level editor and its headless commands. The binary is a thin wrapper
//! around [`cli::main`], so tests run exactly what users run.
#![warn(missing_docs)]

pub mod checker_commands;
pub mod checker_reports;
pub mod cli;
pub mod compile_command;
pub mod editor;
pub mod generated_docs;
pub mod git_commands;
pub mod live;
pub mod merge_check;
pub mod new_project;
pub mod outcome;
pub mod play_command;
pub mod plugins;
pub mod query_service;
pub mod recover_command;
pub mod render;
pub mod shell;
pub mod trust;
pub mod watch_command;
