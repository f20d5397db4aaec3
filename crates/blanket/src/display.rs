//! Printed privacy numbers: decimal rounding toward the safe side (eps, delta and gamma up;
//! eps0 and budgets down) and exact echoes of typed values. Shared by every front end (the
//! CLI's tables and messages, the Python package's reasons and notes) so a number reads the
//! same everywhere.

/// Which way [`directed`] rounds: toward +infinity or toward -infinity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Round {
    /// Toward +infinity (eps, delta, gamma: the printed value is never below the true one).
    Up,
    /// Toward -infinity (eps0, budgets: the printed value is never above the true one).
    Down,
}

/// `x` rounded in direction `dir` to at most `digits` significant digits (trailing zeros
/// dropped), in fixed notation for 1e-3 <= |x| < 1e6, else scientific.
///
/// The rounding is done on decimal digits, not in floating point: it starts from the
/// shortest decimal that reads back as `x` (Rust's `{:e}`, so a value the user typed, such
/// as 0.1 or 1e-6, is that decimal exactly) and only moves it in the direction asked, so
/// the printed number is on the safe side of that decimal and values with at most `digits`
/// significant digits print unchanged. The guarantee is stated for the f64 blanket computed
/// with: the printed decimal, read back as an f64, is never on the unsafe side of it (tested).
/// It may differ from the f64's exact binary value by less than half an ulp (1e-16 relative):
/// 0.1 prints as 0.1, not 0.1000000000000000056.
pub fn directed(x: f64, digits: usize, dir: Round) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = digits.max(1);
    let shortest = format!("{:e}", x.abs());
    let (mantissa, exp) = shortest.split_once('e').unwrap_or((&shortest, "0"));
    let mut exp: i32 = exp.parse().unwrap_or(0);
    let all: Vec<u8> = mantissa
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    let mut keep: Vec<u8> = all
        .iter()
        .copied()
        .chain(std::iter::repeat(0))
        .take(digits)
        .collect();
    let dropped_nonzero = all.iter().skip(digits).any(|&d| d != 0);
    // Away from zero when rounding up a positive or down a negative number.
    let away = dropped_nonzero && ((dir == Round::Up) == (x > 0.0));
    if away {
        let mut i = digits;
        loop {
            if i == 0 {
                keep.insert(0, 1);
                keep.truncate(digits);
                exp += 1;
                break;
            }
            i -= 1;
            if keep[i] == 9 {
                keep[i] = 0;
            } else {
                keep[i] += 1;
                break;
            }
        }
    }
    // Trailing zeros carry no information: 0.5 prints as 0.5, 1e-6 as 1e-6.
    while keep.len() > 1 && keep.last() == Some(&0) {
        keep.pop();
    }
    let digits = keep.len();
    let sign = if x < 0.0 { "-" } else { "" };
    let body: String = keep.iter().map(|d| char::from(b'0' + d)).collect();
    if (-3..6).contains(&exp) {
        let last = exp - (digits as i32 - 1); // power of ten of the last kept digit
        if last >= 0 {
            format!("{sign}{body}{}", "0".repeat(last as usize))
        } else {
            let decimals = (-last) as usize;
            let padded = format!("{body:0>width$}", width = decimals + 1);
            let (int, frac) = padded.split_at(padded.len() - decimals);
            format!("{sign}{int}.{frac}")
        }
    } else {
        let (first, rest) = body.split_at(1);
        if rest.is_empty() {
            format!("{sign}{first}e{exp}")
        } else {
            format!("{sign}{first}.{rest}e{exp}")
        }
    }
}

/// An upper bound printed at 4 significant digits (eps, delta, gamma).
pub fn up(x: f64) -> String {
    directed(x, 4, Round::Up)
}

/// A lower bound printed at 4 significant digits (eps0, budgets).
pub fn down(x: f64) -> String {
    directed(x, 4, Round::Down)
}

/// A value the user typed, echoed exactly: the shortest decimal that reads back as it, in
/// scientific notation outside 1e-4 <= |x| < 1e7 (so 1e-300 is not 300 digits).
pub fn echo(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || !x.is_finite() || (1e-4..1e7).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directed_rounding_is_on_the_safe_side() {
        assert_eq!(down(0.910565), "0.9105");
        assert_eq!(up(0.910565), "0.9106");
        assert_eq!(up(0.85270001), "0.8528");
        assert_eq!(down(0.85279999), "0.8527");
        // exact values stay as they are
        assert_eq!(up(0.5), "0.5");
        assert_eq!(down(0.5), "0.5");
        assert_eq!(up(0.1), "0.1");
        assert_eq!(down(0.1), "0.1");
        assert_eq!(up(1e-6), "1e-6");
        assert_eq!(down(1e-6), "1e-6");
        assert_eq!(up(2.0), "2");
        // carries
        assert_eq!(up(0.99999), "1");
        assert_eq!(up(9.99999e-7), "1e-6");
        assert_eq!(up(999.99), "1000");
        assert_eq!(down(999.99), "999.9");
        // negative numbers: up is toward +infinity
        assert_eq!(up(-0.910565), "-0.9105");
        assert_eq!(down(-0.910565), "-0.9106");
        // tiny and huge: no 300 digits
        assert_eq!(up(1e-300), "1e-300");
        assert_eq!(up(1.23456e300), "1.235e300");
        assert_eq!(down(123456.0), "123400");
        assert_eq!(down(1234567.0), "1.234e6");
        assert_eq!(up(0.00123456), "0.001235");
        assert_eq!(up(f64::INFINITY), "inf");
        assert_eq!(up(0.0), "0");
        assert_eq!(directed(0.910565, 2, Round::Down), "0.91");
    }

    /// Read back as f64, a number rounded up is never below the value and one rounded down
    /// never above it (the printed decimal moves only away from the shortest round-trip
    /// decimal, and parsing is monotone), over many magnitudes and digit counts.
    #[test]
    fn directed_rounding_reads_back_on_the_safe_side() {
        let mut x = 1.234_567_890_123e-12_f64;
        for i in 0..4000u32 {
            // a deterministic spread of mantissas and exponents
            x = (x * 7.389_056_098_930_65).rem_euclid(1e12) + f64::from(i) * 1e-9;
            for digits in [1, 2, 4, 6] {
                let u: f64 = directed(x, digits, Round::Up).parse().unwrap();
                let d: f64 = directed(x, digits, Round::Down).parse().unwrap();
                assert!(u >= x, "up({x}, {digits}) = {u}");
                assert!(d <= x, "down({x}, {digits}) = {d}");
                let (nu, nd): (f64, f64) = (
                    directed(-x, digits, Round::Up).parse().unwrap(),
                    directed(-x, digits, Round::Down).parse().unwrap(),
                );
                assert!(nu >= -x && nd <= -x, "-{x}, {digits}: {nu} {nd}");
            }
        }
    }

    #[test]
    fn echo_is_exact_and_compact() {
        assert_eq!(echo(1e-300), "1e-300");
        assert_eq!(echo(0.01), "0.01");
        assert_eq!(echo(1e-6), "1e-6");
        assert_eq!(echo(3.0), "3");
    }
}
