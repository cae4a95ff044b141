//! Profiles: a named parameter set that makes a scheme behave as another simulator does (`profile =
//! "psu-flashsim"`). A profile is resolved in the engine before the scheme parses its parameters, so that the
//! command line and the Python API take it as any other parameter, and the report echoes what ran
//! (`<scheme>.profile`). A profile sets each of its parameters the run does not give: a value given wins, the
//! scheme's default among them (`-p profile=psu-flashsim -p gc_reserve_blocks=1` runs with 1). A run repeated
//! from its report (`config.resolved`, every parameter as it ran, the profile's values among them) runs alike.
//! `docs/matching-other-simulators.md` says what each profile matches, how it was measured and what differs.

use crate::config::{ConfigError, Invalid};
use crate::device::Result;
use crate::ftl::Extra;
use serde_json::{Map, Value};

/// A named parameter set of one scheme.
pub struct Profile {
    pub name: &'static str,
    /// The simulator it reproduces, for the error that lists the profiles.
    pub peer: &'static str,
    /// The parameters it sets, as (key, value).
    pub params: fn() -> Vec<(&'static str, Value)>,
}

/// A profile as it ran: its name and each of its parameters with the value that ran (one given wins over the
/// profile's).
pub struct Applied {
    pub name: &'static str,
    pub settings: Vec<(&'static str, Value)>,
}

impl Applied {
    /// The report's echo: `<scheme>.profile` = the name, `<scheme>.profile.<parameter>` = each value that ran.
    pub fn report(&self, scheme: &str, out: &mut Extra) {
        out.push((format!("{scheme}.profile"), self.name.into()));
        for (key, value) in &self.settings {
            let text = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push((format!("{scheme}.profile.{key}"), text.into()));
        }
    }
}

/// `given` with its `profile` (if any) resolved among `profiles` of `scheme`: the profile's parameters where
/// `given` has none (see the module doc). The `profile` key stays, so that the scheme's params record it.
/// `profile = "none"` (the default `ftlsim list` shows, which a grid or a TOML file, without a null, can
/// give) is no profile.
pub fn resolve(scheme: &str, given: &Value, profiles: &[Profile]) -> Result<Value, ConfigError> {
    let name = match given.get("profile") {
        None | Some(Value::Null) => return Ok(given.clone()),
        Some(Value::String(name)) if name.eq_ignore_ascii_case("none") => {
            let mut params = given.clone();
            params["profile"] = Value::Null;
            return Ok(params);
        }
        Some(Value::String(name)) => name.as_str(),
        Some(other) => return Err(unknown(scheme, other, profiles)),
    };
    let profile = profiles
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| unknown(scheme, name, profiles))?;
    let mut params: Map<String, Value> = match given {
        Value::Object(given) => given.clone(),
        _ => Map::new(),
    };
    for (key, value) in (profile.params)() {
        params.entry(key).or_insert(value);
    }
    Ok(Value::Object(params))
}

/// The profile `name` of a scheme's typed configuration `params` as it ran: its name and the value in `params`
/// of each parameter it sets (the report's echo). None when no profile was given, or `name` is not one of
/// `profiles` (parsing refuses such a name before a scheme is built).
pub fn applied(
    name: Option<&str>,
    params: &impl serde::Serialize,
    profiles: &[Profile],
) -> Option<Applied> {
    let profile = profiles.iter().find(|p| Some(p.name) == name)?;
    let values = serde_json::to_value(params).ok()?;
    let settings = (profile.params)()
        .into_iter()
        .map(|(k, _)| (k, values.get(k).cloned().unwrap_or(Value::Null)))
        .collect();
    Some(Applied {
        name: profile.name,
        settings,
    })
}

/// The error of a `profile` that is not one of `profiles`: they are listed, the first suggested.
fn unknown(scheme: &str, given: impl std::fmt::Display, profiles: &[Profile]) -> ConfigError {
    ConfigError::Invalid {
        within: Some(format!("scheme `{scheme}`")),
        problems: vec![Invalid::new(
            "profile",
            given,
            format!("is not a profile of this scheme; {}", offered(profiles)),
            profiles.first().map(|p| p.name.to_string()),
        )],
    }
}

fn offered(profiles: &[Profile]) -> String {
    if profiles.is_empty() {
        return "this scheme has no profiles; leave profile out".into();
    }
    let list: Vec<String> = profiles
        .iter()
        .map(|p| format!("`{}` ({})", p.name, p.peer))
        .collect();
    format!("its profiles are: {} (none: no profile)", list.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PROFILES: &[Profile] = &[Profile {
        name: "peer",
        peer: "a peer simulator",
        params: || vec![("a", json!(1)), ("b", json!("x"))],
    }];

    #[test]
    fn profile_none_is_no_profile() {
        let none = resolve("s", &json!({"profile": "None", "b": "y"}), PROFILES).unwrap();
        assert_eq!(none, json!({"profile": null, "b": "y"}));
    }

    #[test]
    fn a_parameter_given_wins_over_the_profile_at_any_value_and_the_echo_shows_what_runs() {
        let given = json!({"profile": "peer", "b": "y", "c": 2});
        let params = resolve("s", &given, PROFILES).unwrap();
        assert_eq!(params, json!({"profile": "peer", "a": 1, "b": "y", "c": 2}));
        let mut echo = Extra::new();
        applied(Some("peer"), &params, PROFILES)
            .unwrap()
            .report("s", &mut echo);
        let echo: Vec<(String, Value)> = echo;
        assert_eq!(
            echo,
            [
                ("s.profile".to_string(), json!("peer")),
                ("s.profile.a".to_string(), json!("1")),
                ("s.profile.b".to_string(), json!("y")),
            ]
        );
        // A value given at what would be the scheme's default (say a = 0) wins too.
        let at_default = resolve("s", &json!({"profile": "peer", "a": 0}), PROFILES).unwrap();
        assert_eq!(at_default, json!({"profile": "peer", "a": 0, "b": "x"}));
        // The run repeated from what ran (every parameter given) runs alike.
        assert_eq!(resolve("s", &params, PROFILES).unwrap(), params);
        let none = resolve("s", &json!({"c": 2}), PROFILES).unwrap();
        assert_eq!(none, json!({"c": 2}));
        assert!(applied(None, &none, PROFILES).is_none());
    }

    #[test]
    fn an_unknown_profile_lists_the_known_ones() {
        let e = resolve("s", &json!({"profile": "mqsim"}), PROFILES)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("profile=mqsim is not a profile") && e.contains("`peer` (a peer simulator)"),
            "{e}"
        );
    }
}
