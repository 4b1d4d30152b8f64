//! Settings of a few named values (a method, a byte order, a colour map), spelled the same in a job file
//! and on the command line. Each such enum lists its values once, with their names and a line of help:
//! the job file reads them through serde, the command line builds its parsers and `--help` from the list,
//! and each enum's tests check that the two spell every value alike ([`assert_names_match_serde`]).

/// An enum whose values a user names.
pub trait Choice: Copy + PartialEq + Send + Sync + 'static {
    /// Every value with its name and a line of help, in the order `--help` lists them.
    const CHOICES: &'static [(Self, &'static str, &'static str)];
    /// Other names a value is also known by (`grey` for `gray`), with the value's own name.
    const ALIASES: &'static [(&'static str, &'static str)] = &[];

    /// The value's name, as a job file spells it.
    fn choice_name(self) -> &'static str {
        Self::CHOICES.iter().find(|c| c.0 == self).map_or("", |c| c.1)
    }

    /// The value called `name` (or one of its aliases).
    fn from_name(name: &str) -> Option<Self> {
        let name = Self::ALIASES.iter().find(|a| a.0 == name).map_or(name, |a| a.1);
        Self::CHOICES.iter().find(|c| c.1 == name).map(|c| c.0)
    }
}

/// Asserts that serde reads every name of `T`'s list, and its aliases, as the value the list gives: a test
/// helper for the crates that define choices.
pub fn assert_names_match_serde<T>()
where
    T: Choice + serde::de::DeserializeOwned + std::fmt::Debug,
{
    use serde::de::value::{Error, StrDeserializer};
    use serde::de::IntoDeserializer;
    let read = |name: &str| -> T {
        let d: StrDeserializer<'_, Error> = name.into_deserializer();
        T::deserialize(d).unwrap_or_else(|e| panic!("serde does not read {name:?}: {e}"))
    };
    for &(value, name, _) in T::CHOICES {
        assert_eq!(read(name), value, "{name}");
        assert_eq!(T::from_name(name), Some(value));
    }
    for &(alias, name) in T::ALIASES {
        assert_eq!(Some(read(alias)), T::from_name(name), "{alias}");
    }
}
