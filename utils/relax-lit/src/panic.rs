//! Turning panics into failure messages without the default hook's noise.
//!
//! [`quietly`] installs a panic hook that records the message and location in a
//! thread-local instead of printing it; [`panic_message`] reads it back (or falls back to
//! the payload) where the panic was caught.

use std::any::Any;
use std::cell::RefCell;
use std::panic;

thread_local! {
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` with a hook that records panics instead of printing them, then restores the
/// previous hook.
pub fn quietly<R>(f: impl FnOnce() -> R) -> R {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(|info| {
        LAST.with(|l| *l.borrow_mut() = Some(info.to_string()));
    }));
    let result = f();
    drop(panic::take_hook());
    panic::set_hook(previous);
    result
}

/// The message of the panic just caught on this thread, with its location when
/// [`quietly`] recorded it.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(recorded) = LAST.with(|l| l.borrow_mut().take()) {
        return recorded.replace('\n', " ");
    }
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".into()
    }
}
