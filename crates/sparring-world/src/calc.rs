//! A small arithmetic evaluator for `calculate` tools: numbers, `+ - * /`,
//! unary minus and parentheses.

/// The value of `expression`, or why it has none.
pub(crate) fn evaluate(expression: &str) -> Result<f64, String> {
    let tokens: Vec<char> = expression.chars().filter(|c| !c.is_whitespace()).collect();
    if tokens.is_empty() {
        return Err("the expression is empty".to_owned());
    }
    let mut p = Parser { tokens, at: 0 };
    let v = p.sum()?;
    if p.at != p.tokens.len() {
        return Err(format!(
            "unexpected `{}` in the expression",
            p.tokens[p.at..].iter().collect::<String>()
        ));
    }
    if v.is_finite() {
        Ok(v)
    } else {
        Err("division by zero".to_owned())
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

    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let r = self.product()?;
            v = if op == '+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.unary()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.at += 1;
            let r = self.unary()?;
            v = if op == '*' { v * r } else { v / r };
        }
        Ok(v)
    }

    fn unary(&mut self) -> Result<f64, String> {
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

    fn atom(&mut self) -> Result<f64, String> {
        if self.peek() == Some('(') {
            self.at += 1;
            let v = self.sum()?;
            if self.peek() != Some(')') {
                return Err("a `(` is not closed".to_owned());
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
            Some(c) if text.is_empty() => format!("unexpected `{c}` in the expression"),
            _ => format!("`{text}` is not a number"),
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
        assert!(evaluate("1 / 0").is_err());
        assert!(evaluate("2 +").is_err());
        assert!(evaluate("rm -rf").is_err());
        assert!(evaluate("(1").is_err());
    }
}
