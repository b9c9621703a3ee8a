//! Pass options: the raw `key=value` list given in pipeline text or a flag
//! ([`PassOptions`]), the declared options of a pass ([`OptionInfo`]), typed values
//! ([`OptionValue`]) and the typed options structs that [`declare_pass!`](crate::declare_pass)
//! generates ([`TypedOptions`]; [`NoOptions`] for passes without any).
//!
//! **The default key.** One option of a pass may be its *default key*: a value written
//! without a key sets it, so `--quantize-weights=q4_0` is `--quantize-weights=type=q4_0`
//! and `quantize-weights{q4_0}` is `quantize-weights{type=q4_0}`. The parsers keep such
//! a value under the empty key ([`PassOptions`]); [`resolve_default_key`] gives it the
//! declared key before the options are read, and it is an error for a pass without one.
//!
//! **Enumerated values.** An option type that takes one of a few words lists them in
//! [`OptionValue::VALUES`]; a value close to one of them gets a did-you-mean.

/// Options as written: `fuse-ops{max-depth=8}` or `--fuse-ops=max-depth=8`, in order. A
/// value given without a key (`quantize-weights{q4_0}`) has the empty key, until
/// [`resolve_default_key`] names it.
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
    /// True for the pass's default key: a value given without a key sets this option.
    pub default_key: bool,
}

/// A type an option can have: how its text is read.
pub trait OptionValue: Sized {
    /// What a valid value looks like, for messages (`a non-negative integer`).
    const EXPECTED: &'static str;
    /// The value written `text`, or `None` when it is not one.
    fn parse_value(text: &str) -> Option<Self>;
    /// The valid values of an enumerated option type, for did-you-mean (empty for other
    /// types).
    const VALUES: &'static [&'static str] = &[];
}

/// How a declared default is turned into the option's value: a literal of the option's
/// own type is itself; an enumerated type may also take its name as a string literal
/// (`= "q4_0"`), so the declaration and `--list-passes` show the word users type.
pub trait FromLiteral<L> {
    /// The value of the literal.
    fn from_literal(literal: L) -> Self;
}

impl<T> FromLiteral<T> for T {
    fn from_literal(literal: T) -> T {
        literal
    }
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
        let o = resolve_default_key(o, Self::OPTIONS)?;
        check_keys(&o, Self::OPTIONS).map(|()| NoOptions)
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
        /// A valid value close to it (enumerated options).
        suggestion: Option<&'static str>,
    },
    /// A value without a key, for a pass that has no default key.
    NoDefaultKey {
        /// The value as given.
        value: String,
        /// True when the pass has no options at all.
        takes_none: bool,
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
            OptionError::Invalid { key, expected, value, suggestion } => {
                let mut msg = format!("pass `{pass}`: option `{key}` must be {expected}, found `{value}`");
                if let Some(s) = suggestion {
                    msg.push_str(&format!("; did you mean `{s}`?"));
                }
                msg
            }
            OptionError::NoDefaultKey { value, takes_none: true } => {
                format!("pass `{pass}` takes no options, found `{value}`")
            }
            OptionError::NoDefaultKey { value, takes_none: false } => {
                format!("pass `{pass}`: expected `key=value`, found `{value}` (the pass has no default key)")
            }
        }
    }
}

/// `o` with a value given without a key (the empty key) under the declared default key.
/// Without a default key such a value is an error.
pub fn resolve_default_key(o: &PassOptions, declared: &'static [OptionInfo]) -> Result<PassOptions, OptionError> {
    let default_key = declared.iter().find(|d| d.default_key).map(|d| d.name);
    let mut out = Vec::with_capacity(o.0.len());
    for (key, value) in &o.0 {
        if !key.is_empty() {
            out.push((key.clone(), value.clone()));
            continue;
        }
        match default_key {
            Some(k) => out.push((k.to_string(), value.clone())),
            None => return Err(OptionError::NoDefaultKey { value: value.clone(), takes_none: declared.is_empty() }),
        }
    }
    Ok(PassOptions(out))
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
        _ => {
            let suggestion = suggest(text, T::VALUES.iter().copied());
            Err(OptionError::Invalid { key, expected, value: text.to_string(), suggestion })
        }
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
        OptionInfo { name: "max-depth", help: "", default: "256", default_key: false },
        OptionInfo { name: "opt-level", help: "", default: "2", default_key: false },
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

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Colour {
        Red,
        Green,
    }

    impl OptionValue for Colour {
        const EXPECTED: &'static str = "`red` or `green`";
        const VALUES: &'static [&'static str] = &["red", "green"];
        fn parse_value(text: &str) -> Option<Colour> {
            match text {
                "red" => Some(Colour::Red),
                "green" => Some(Colour::Green),
                _ => None,
            }
        }
    }

    #[test]
    fn enumerated_values_suggest() {
        let o = opts(&[("colour", "gren")]);
        let err = option_value(&o, "colour", Colour::Red, None).unwrap_err();
        assert_eq!(
            err.message("p"),
            "pass `p`: option `colour` must be `red` or `green`, found `gren`; did you mean `green`?"
        );
        let err = option_value(&opts(&[("colour", "blue")]), "colour", Colour::Red, None).unwrap_err();
        assert_eq!(err.message("p"), "pass `p`: option `colour` must be `red` or `green`, found `blue`");
        assert_eq!(option_value(&opts(&[("colour", "green")]), "colour", Colour::Red, None), Ok(Colour::Green));
    }

    #[test]
    fn the_default_key_takes_a_bare_value() {
        const WITH: &[OptionInfo] = &[
            OptionInfo { name: "type", help: "", default: "a", default_key: true },
            OptionInfo { name: "size", help: "", default: "1", default_key: false },
        ];
        let r = resolve_default_key(&opts(&[("", "b"), ("size", "2")]), WITH).unwrap();
        assert_eq!(r, opts(&[("type", "b"), ("size", "2")]));
        // Given twice, once bare: the key check says so.
        let r = resolve_default_key(&opts(&[("", "b"), ("type", "c")]), WITH).unwrap();
        assert_eq!(check_keys(&r, WITH).unwrap_err().message("q"), "pass `q`: option `type` is given more than once");
        let err = resolve_default_key(&opts(&[("", "8")]), DECLARED).unwrap_err();
        assert_eq!(
            err.message("fuse-ops"),
            "pass `fuse-ops`: expected `key=value`, found `8` (the pass has no default key)"
        );
        let err = NoOptions::from_options(&opts(&[("", "x")])).unwrap_err();
        assert_eq!(err.message("normalize"), "pass `normalize` takes no options, found `x`");
        assert_eq!(<Colour as FromLiteral<Colour>>::from_literal(Colour::Green), Colour::Green);
    }

    #[test]
    fn suggestions() {
        let names = ["max-depth", "opt-level"];
        assert_eq!(suggest("max_depth", names.iter().copied()), Some("max-depth"));
        assert_eq!(suggest("optlevel", names.iter().copied()), Some("opt-level"));
        assert_eq!(suggest("x", names.iter().copied()), None);
    }
}
