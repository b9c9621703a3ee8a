//! Pass options: the raw `key=value` list given in pipeline text or a flag
//! ([`PassOptions`]), the declared options of a pass ([`OptionInfo`]), typed values
//! ([`OptionValue`]) and the typed options structs that [`declare_pass!`](crate::declare_pass)
//! generates ([`TypedOptions`]; [`NoOptions`] for passes without any).

/// Options as written: `fuse-ops{max-depth=8}` or `--fuse-ops=max-depth=8`, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassOptions(pub Vec<(String, String)>);

impl PassOptions {
    /// The raw value of an option.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// A declared option of a pass, for `--list-passes` and validation.
#[derive(Clone, Copy, Debug)]
pub struct OptionInfo {
    /// The option key (`max-depth`).
    pub name: &'static str,
    /// One-line description.
    pub help: &'static str,
    /// The default, as text.
    pub default: &'static str,
}

/// A type an option can have: how its text is read.
pub trait OptionValue: Sized {
    /// What a valid value looks like, for messages (`a non-negative integer`).
    const EXPECTED: &'static str;
    /// The value written `text`, or `None` when it is not one.
    fn parse_value(text: &str) -> Option<Self>;
}

impl OptionValue for bool {
    const EXPECTED: &'static str = "`true` or `false`";
    fn parse_value(text: &str) -> Option<bool> {
        match text {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        }
    }
}

macro_rules! integer_option {
    ($($t:ty: $expected:literal),*) => {$(
        impl OptionValue for $t {
            const EXPECTED: &'static str = $expected;
            fn parse_value(text: &str) -> Option<$t> {
                text.parse().ok()
            }
        }
    )*};
}

integer_option!(
    i32: "an integer", i64: "an integer",
    u32: "a non-negative integer", u64: "a non-negative integer", usize: "a non-negative integer"
);

/// A typed options struct: the declared options of one pass and how to read them.
/// [`declare_pass!`](crate::declare_pass) implements it for the struct it declares.
pub trait TypedOptions: Sized + Default {
    /// The declared options, in declaration order.
    const OPTIONS: &'static [OptionInfo];
    /// Reads `o`: every key must be declared and given once, and every value valid;
    /// options not given keep their defaults.
    fn from_options(o: &PassOptions) -> Result<Self, OptionError>;
}

/// The options of a pass that has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoOptions;

impl TypedOptions for NoOptions {
    const OPTIONS: &'static [OptionInfo] = &[];
    fn from_options(o: &PassOptions) -> Result<NoOptions, OptionError> {
        check_keys(o, Self::OPTIONS).map(|()| NoOptions)
    }
}

/// Why options were rejected; [`OptionError::message`] names the pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionError {
    /// A key the pass does not declare.
    Unknown {
        /// The key as given.
        key: String,
        /// A declared key close to it.
        suggestion: Option<&'static str>,
        /// True when the pass has no options at all.
        takes_none: bool,
    },
    /// A key given twice.
    Repeated {
        /// The key.
        key: String,
    },
    /// A value that is not valid for its option.
    Invalid {
        /// The key.
        key: &'static str,
        /// What a valid value looks like (`a non-negative integer`).
        expected: &'static str,
        /// The value as given.
        value: String,
    },
}

impl OptionError {
    /// The message, naming the pass: ``pass `fuse-ops`: option `max-depth` must be a
    /// non-negative integer, found `x` ``.
    pub fn message(&self, pass: &str) -> String {
        match self {
            OptionError::Unknown { key, suggestion, takes_none } => {
                let mut msg = format!("pass `{pass}` has no option `{key}`");
                if *takes_none {
                    msg.push_str(": it takes no options");
                } else if let Some(s) = suggestion {
                    msg.push_str(&format!("; did you mean `{s}`?"));
                }
                msg
            }
            OptionError::Repeated { key } => format!("pass `{pass}`: option `{key}` is given more than once"),
            OptionError::Invalid { key, expected, value } => {
                format!("pass `{pass}`: option `{key}` must be {expected}, found `{value}`")
            }
        }
    }
}

/// Checks that every key of `o` is declared in `declared` and given once.
pub fn check_keys(o: &PassOptions, declared: &'static [OptionInfo]) -> Result<(), OptionError> {
    for (i, (key, _)) in o.0.iter().enumerate() {
        if !declared.iter().any(|d| d.name == key) {
            let suggestion = suggest(key, declared.iter().map(|d| d.name));
            return Err(OptionError::Unknown { key: key.clone(), suggestion, takes_none: declared.is_empty() });
        }
        if o.0[..i].iter().any(|(k, _)| k == key) {
            return Err(OptionError::Repeated { key: key.clone() });
        }
    }
    Ok(())
}

/// A condition an option's value must meet, and the description of valid values used in
/// messages in place of [`OptionValue::EXPECTED`] (`a power of two from 8 to 4096`).
pub type OptionCheck<T> = (fn(&T) -> bool, &'static str);

/// The value of the option `key` in `o`, or `default` when not given. `check` is a
/// condition the value must meet and its description, which then replaces
/// [`OptionValue::EXPECTED`] in the message.
pub fn option_value<T: OptionValue>(
    o: &PassOptions,
    key: &'static str,
    default: T,
    check: Option<OptionCheck<T>>,
) -> Result<T, OptionError> {
    let Some(text) = o.get(key) else { return Ok(default) };
    let expected = check.map_or(T::EXPECTED, |(_, e)| e);
    match T::parse_value(text) {
        Some(v) if check.is_none_or(|(ok, _)| ok(&v)) => Ok(v),
        _ => Err(OptionError::Invalid { key, expected, value: text.to_string() }),
    }
}

pub use relax_ir::diag::suggest;

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(kv: &[(&str, &str)]) -> PassOptions {
        PassOptions(kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    const DECLARED: &[OptionInfo] = &[
        OptionInfo { name: "max-depth", help: "", default: "256" },
        OptionInfo { name: "opt-level", help: "", default: "2" },
    ];

    #[test]
    fn values() {
        assert_eq!(bool::parse_value("true"), Some(true));
        assert_eq!(bool::parse_value("0"), Some(false));
        assert_eq!(bool::parse_value("yes"), None);
        assert_eq!(usize::parse_value("-1"), None);
        assert_eq!(i64::parse_value("-1"), Some(-1));
        let o = opts(&[("max-depth", "8"), ("opt-level", "x")]);
        assert_eq!(option_value::<usize>(&o, "max-depth", 256, None), Ok(8));
        assert_eq!(option_value::<usize>(&PassOptions::default(), "max-depth", 256, None), Ok(256));
        let err = option_value::<usize>(&o, "opt-level", 2, None).unwrap_err();
        assert_eq!(err.message("p"), "pass `p`: option `opt-level` must be a non-negative integer, found `x`");
        let even: fn(&usize) -> bool = |v| v % 2 == 0;
        let err =
            option_value::<usize>(&opts(&[("max-depth", "7")]), "max-depth", 2, Some((even, "even"))).unwrap_err();
        assert_eq!(err.message("p"), "pass `p`: option `max-depth` must be even, found `7`");
    }

    #[test]
    fn keys() {
        assert_eq!(check_keys(&opts(&[("max-depth", "1"), ("opt-level", "1")]), DECLARED), Ok(()));
        let err = check_keys(&opts(&[("max-dpeth", "1")]), DECLARED).unwrap_err();
        assert_eq!(err.message("fuse-ops"), "pass `fuse-ops` has no option `max-dpeth`; did you mean `max-depth`?");
        let err = check_keys(&opts(&[("colour", "1")]), DECLARED).unwrap_err();
        assert_eq!(err.message("fuse-ops"), "pass `fuse-ops` has no option `colour`");
        let err = check_keys(&opts(&[("opt-level", "1"), ("opt-level", "2")]), DECLARED).unwrap_err();
        assert_eq!(err.message("fuse-ops"), "pass `fuse-ops`: option `opt-level` is given more than once");
        let err = NoOptions::from_options(&opts(&[("depth", "3")])).unwrap_err();
        assert_eq!(err.message("normalize"), "pass `normalize` has no option `depth`: it takes no options");
    }

    #[test]
    fn suggestions() {
        let names = ["max-depth", "opt-level"];
        assert_eq!(suggest("max_depth", names.iter().copied()), Some("max-depth"));
        assert_eq!(suggest("optlevel", names.iter().copied()), Some("opt-level"));
        assert_eq!(suggest("x", names.iter().copied()), None);
    }
}
