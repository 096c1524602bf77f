//! A small arithmetic evaluator for `calculate` tools: numbers, `+ - * /`,
//! unary minus and parentheses.

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CalcError {
    /// Nothing but whitespace.
    #[error("the expression is empty")]
    Empty,
    /// Text where none can stand: the rest of the expression from there.
    #[error("unexpected `{0}` in the expression")]
    Unexpected(String),
    /// Digits and dots that do not make a number.
    #[error("`{0}` is not a number")]
    NotANumber(String),
    /// A `(` without its `)`.
    #[error("a `(` is not closed")]
    Unclosed,
    /// A result that is not finite.
    #[error("division by zero")]
    DivisionByZero,
}

/// The value of `expression`, or why it has none.
pub(crate) fn evaluate(expression: &str) -> Result<f64, CalcError> {
    let tokens: Vec<char> = expression.chars().filter(|c| !c.is_whitespace()).collect();
    if tokens.is_empty() {
        return Err(CalcError::Empty);
    }
    let mut p = Parser { tokens, at: 0 };
    let v = p.sum()?;
    if p.at != p.tokens.len() {
        return Err(CalcError::Unexpected(p.tokens[p.at..].iter().collect()));
    }
    if v.is_finite() {
        Ok(v)
    } else {
        Err(CalcError::DivisionByZero)
    }
}

struct Parser {
    tokens: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.tokens.get(self.at).copied()
    }

    fn sum(&mut self) -> Result<f64, CalcError> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let r = self.product()?;
            v = if op == '+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<f64, CalcError> {
        let mut v = self.unary()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.at += 1;
            let r = self.unary()?;
            v = if op == '*' { v * r } else { v / r };
        }
        Ok(v)
    }

    fn unary(&mut self) -> Result<f64, CalcError> {
        if self.peek() == Some('-') {
            self.at += 1;
            return Ok(-self.unary()?);
        }
        if self.peek() == Some('+') {
            self.at += 1;
            return self.unary();
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<f64, CalcError> {
        if self.peek() == Some('(') {
            self.at += 1;
            let v = self.sum()?;
            if self.peek() != Some(')') {
                return Err(CalcError::Unclosed);
            }
            self.at += 1;
            return Ok(v);
        }
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
            self.at += 1;
        }
        let text: String = self.tokens[start..self.at].iter().collect();
        text.parse::<f64>().map_err(|_| match self.peek() {
            Some(c) if text.is_empty() => CalcError::Unexpected(c.to_string()),
            _ => CalcError::NotANumber(text),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic() {
        assert!((evaluate("2 + 2").unwrap() - 4.0).abs() < 1e-9);
        assert!((evaluate("(10 - 4) * 3 / 2").unwrap() - 9.0).abs() < 1e-9);
        assert!((evaluate("-1.5 + 4").unwrap() - 2.5).abs() < 1e-9);
        assert_eq!(evaluate("1 / 0"), Err(CalcError::DivisionByZero));
        assert_eq!(evaluate("2 +"), Err(CalcError::NotANumber(String::new())));
        assert_eq!(
            evaluate("rm -rf"),
            Err(CalcError::Unexpected("r".to_owned()))
        );
        assert_eq!(evaluate("(1"), Err(CalcError::Unclosed));
        assert_eq!(evaluate(" "), Err(CalcError::Empty));
        assert_eq!(
            evaluate("2)*3").unwrap_err().to_string(),
            "unexpected `)*3` in the expression"
        );
        assert_eq!(
            evaluate("1..2").unwrap_err().to_string(),
            "`1..2` is not a number"
        );
    }
}
