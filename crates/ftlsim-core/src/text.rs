//! Text helpers every layer uses to quote input and read and write sizes. A leaf: it imports nothing from the
//! crate, so any module may use it without joining an import circle.

use thiserror::Error;

/// Longest piece of a field or line an error quotes, in characters.
pub const MAX_QUOTE_CHARS: usize = 80;

/// At most [`MAX_QUOTE_CHARS`] characters of `text`, with the full length said when it is cut.
pub fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_QUOTE_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}... ({} bytes)", &text[..cut], text.len()),
    }
}

/// `n` and the noun, plural where `n` is not 1: "1 block", "3 blocks".
pub fn count_of(n: u32, noun: &str) -> String {
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// Bytes of a line that is not text (a binary file), quoted so that a terminal shows them as they are: printable
/// characters as themselves, control characters and bytes that are not UTF-8 escaped (`\x1b`, `\xd9`), clipped
/// as [`clip`] does (the length said is the bytes'). Quoted raw, they printed replacement characters and the
/// terminal took the escape codes.
pub fn quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() {
                out.extend(c.escape_default());
            } else {
                out.push(c);
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    match out.char_indices().nth(MAX_QUOTE_CHARS) {
        None => out,
        Some((cut, _)) => format!("{}... ({} bytes)", &out[..cut], bytes.len()),
    }
}

/// A size that does not parse; the message quotes the text and lists the units accepted.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct SizeError(pub String);

/// Parses a size such as `34MiB`, `16 GB`, `4096`, `128KiB`. KiB, MiB, GiB, TiB are powers of 1024; kB, MB,
/// GB, TB (any case) powers of 1000, as disk and card makers write them. A bare `K`, `M`, `G` or `T` is
/// refused: it means either, and a silent guess would change a capacity by 5-10%.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = |why: &str| {
        SizeError(format!(
            "size `{}` {why}; write a number with an optional unit B, KiB, MiB, GiB, TiB (powers of 1024) or kB, MB, GB, TB (powers of 1000), e.g. \"34MiB\", of at most 16 EiB - 1 byte",
            clip(text)
        ))
    };
    let unit = unit.trim();
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "k" | "m" | "g" | "t" => {
            let upper = unit.to_ascii_uppercase();
            return Err(bad(&format!(
                "has the unit `{unit}`, which could mean {upper}iB (powers of 1024) or {upper}B (powers of 1000)"
            )));
        }
        _ => return Err(bad("does not parse")),
    };
    // Whole numbers are exact; decimals go through f64 and are rounded to a byte.
    if let Ok(whole) = num.parse::<u64>() {
        return whole.checked_mul(mult).ok_or_else(|| bad("is too large"));
    }
    let value: f64 = num.parse().map_err(|_| bad("does not parse"))?;
    if mult == 1 && value.fract() != 0.0 {
        // `capacity=4.5` is a unit left out, not 5 bytes.
        return Err(bad(
            "is a fraction of a byte (a number without a unit is bytes)",
        ));
    }
    let bytes = (value * mult as f64).round();
    if bytes >= u64::MAX as f64 {
        return Err(bad("is too large"));
    }
    Ok(bytes as u64)
}

/// A readable size: the largest binary unit that divides it, else bytes.
pub fn format_size(bytes: u64) -> String {
    for (unit, shift) in [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

/// What a value of Rust type `name` is, in words a user reads (a workload's `writes=-5` "is not a whole number
/// of 0 or more", a parameter `read_us=fast` "must be a number"), where the type's name would say "u64" or
/// "f64"; serde's "a boolean" is "true or false". Any other name is returned as it is.
pub fn value_kind(name: &str) -> &str {
    match name {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number of 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "f32" | "f64" => "a number",
        "bool" | "a boolean" => "true or false",
        other => other,
    }
}

/// serde's message for a value of the wrong kind ("invalid type: string \"many\", expected u32", "invalid value:
/// integer `-1`, expected u32") in words: "must be a number" ([`value_kind`]); for a count, what is wrong with
/// it ("must be a whole number", "must not be negative", "must be at most 4,294,967,295"), never that 0 will do,
/// as the scheme's own bounds may then refuse it. None for any other message.
pub fn wrong_kind(serde: &str) -> Option<String> {
    let (given, expected) = serde.split_once(", expected ")?;
    if !(given.starts_with("invalid type") || given.starts_with("invalid value")) {
        return None;
    }
    let most = match expected {
        "u8" => u64::from(u8::MAX),
        "u16" => u64::from(u16::MAX),
        "u32" => u64::from(u32::MAX),
        "u64" | "usize" => u64::MAX,
        _ => return Some(format!("must be {}", value_kind(expected))),
    };
    let integer = given
        .strip_prefix("invalid value: integer `")
        .and_then(|rest| rest.strip_suffix('`'));
    Some(match integer {
        Some(n) if n.starts_with('-') => "must not be negative".to_string(),
        Some(_) => format!("must be at most {}", thousands(most)),
        None => "must be a whole number".to_string(),
    })
}

/// `n` with a comma between thousands (4,294,967,295).
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_the_wrong_kind_says_what_is_wrong_and_never_that_0_will_do() {
        let said = |serde: &str| wrong_kind(serde).unwrap();
        assert_eq!(
            said("invalid value: integer `-3`, expected u32"),
            "must not be negative"
        );
        assert_eq!(
            said("invalid value: integer `18446744073709551615`, expected u32"),
            "must be at most 4,294,967,295"
        );
        assert_eq!(
            said("invalid value: integer `300`, expected u8"),
            "must be at most 255"
        );
        assert_eq!(
            said("invalid type: string \"many\", expected u64"),
            "must be a whole number"
        );
        assert_eq!(
            said("invalid type: floating point `1.5`, expected u32"),
            "must be a whole number"
        );
        assert_eq!(
            said("invalid type: string \"fast\", expected f64"),
            "must be a number"
        );
        assert_eq!(
            wrong_kind("unknown field `k`, expected one of `a`, `b`"),
            None
        );
    }

    #[test]
    fn sizes_parse_in_binary_and_decimal_units() {
        assert_eq!(parse_size("34MiB").unwrap(), 34 << 20);
        assert_eq!(parse_size("18446744073709551615").unwrap(), u64::MAX);
        assert_eq!(parse_size("16777215TiB").unwrap(), 16_777_215 << 40);
        assert_eq!(parse_size("1.5KiB").unwrap(), 1536);
        assert_eq!(parse_size("2.0").unwrap(), 2);
        for fraction in ["4.5", "4.5B", "0.5 b"] {
            let err = parse_size(fraction).unwrap_err().to_string();
            assert!(err.contains("is a fraction of a byte"), "{fraction}: {err}");
        }
        for too_large in [
            "16777216TiB",
            "18446744073709551616",
            "1e30",
            "99999999999999999999.5TiB",
        ] {
            let err = parse_size(too_large).unwrap_err().to_string();
            assert!(
                err.contains("too large") || err.contains("does not parse"),
                "{too_large}: {err}"
            );
        }
        let long = "9".repeat(10_000) + "x";
        assert!(parse_size(&long).unwrap_err().to_string().len() < 400);
        assert_eq!(parse_size("16 GB").unwrap(), 16_000_000_000);
        assert_eq!(parse_size("64MB").unwrap(), 64_000_000);
        assert_eq!(parse_size("64mib").unwrap(), 64 << 20);
        assert_eq!(parse_size("2kB").unwrap(), 2000);
        for ambiguous in ["64M", "2k", "1G", "1 T"] {
            let err = parse_size(ambiguous).unwrap_err().to_string();
            assert!(
                err.contains("could mean") && err.contains("iB"),
                "{ambiguous}: {err}"
            );
        }
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("12 parsecs")
            .unwrap_err()
            .to_string()
            .contains("12 parsecs"));
        assert_eq!(format_size(34 << 20), "34MiB");
        assert_eq!(format_size(1000), "1000B");
    }

    #[test]
    fn quote_bytes_escapes_what_a_terminal_would_not_show_as_it_is() {
        assert_eq!(quote_bytes(b"W,0,512"), "W,0,512");
        assert_eq!(quote_bytes("é,1".as_bytes()), "é,1");
        assert_eq!(quote_bytes(b"\xd9p\x1b[2J\t"), "\\xd9p\\u{1b}[2J\\t");
        let long = quote_bytes(&[0xff; 100]);
        assert!(
            long.starts_with("\\xff\\xff") && long.ends_with("... (100 bytes)"),
            "{long}"
        );
    }

    #[test]
    fn clip_keeps_short_text_and_says_the_length_of_long_text() {
        assert_eq!(clip("abc"), "abc");
        let long = "x".repeat(100);
        assert_eq!(clip(&long), format!("{}... (100 bytes)", "x".repeat(80)));
    }
}
