//! The prompt and the generated tokens: ids (`--prompt 1,2,3`, printed comma-separated)
//! or text (`--prompt-text`, tokenized as llama.cpp does with the GGUF file's vocabulary,
//! generated tokens printed as text as they come, generation ending at an end-of-generation
//! token unless `--ignore-eos`).

use relax_tokenizer::{StreamDecoder, Tokenizer};

use super::GenerateArgs;

/// How the prompt was given and how new tokens are printed.
pub(crate) struct TokenIo<'t> {
    /// The tokenizer, for `--prompt-text`.
    text: Option<&'t Tokenizer>,
    stream: StreamDecoder,
    first: bool,
    stop_at_eog: bool,
}

impl<'t> TokenIo<'t> {
    /// The prompt's ids and the printer, from `--prompt` or `--prompt-text`.
    pub(crate) fn new(
        args: &GenerateArgs,
        tokenizer: Option<&'t Tokenizer>,
    ) -> Result<(Vec<i64>, TokenIo<'t>), String> {
        match (&args.prompt, &args.prompt_text) {
            (Some(_), Some(_)) => Err("give the prompt as `--prompt IDS` or as `--prompt-text TEXT`, not both".into()),
            (None, None) => Err("`--generate` needs a prompt: `--prompt IDS` or `--prompt-text TEXT`".into()),
            (Some(ids), None) => {
                let io = TokenIo { text: None, stream: StreamDecoder::new(), first: true, stop_at_eog: false };
                Ok((parse_prompt(ids)?, io))
            }
            (None, Some(text)) => {
                let Some(tok) = tokenizer else {
                    return Err(
                        "`--prompt-text` needs a vocabulary: a GGUF model as the input, or `--weights FILE.gguf`"
                            .into(),
                    );
                };
                let ids = tok.encode(text, true, false).map_err(|e| format!("cannot tokenize `--prompt-text`: {e}"))?;
                if ids.is_empty() {
                    return Err("`--prompt-text` gives no tokens: the prompt must not be empty".into());
                }
                let io = TokenIo {
                    text: Some(tok),
                    stream: StreamDecoder::new(),
                    first: true,
                    stop_at_eog: !args.ignore_eos,
                };
                Ok((ids.iter().map(|&i| i64::from(i)).collect(), io))
            }
        }
    }

    /// The text for a new token (ids: the id, comma-separated).
    pub(crate) fn show(&mut self, id: i64) -> Result<String, String> {
        let first = std::mem::replace(&mut self.first, false);
        match self.text {
            None => Ok(if first { id.to_string() } else { format!(",{id}") }),
            Some(tok) => {
                let id = u32::try_from(id).map_err(|_| format!("token {id} is not a token id"))?;
                self.stream.push(tok, id).map_err(|e| e.to_string())
            }
        }
    }

    /// What is left to print at the end (a character whose bytes did not all arrive).
    pub(crate) fn finish(&mut self) -> String {
        let mut s = std::mem::take(&mut self.stream);
        if self.text.is_some() { s.finish() } else { String::new() }
    }

    /// True when generation ends at `id` (an end-of-generation token in text mode).
    pub(crate) fn stops_at(&self, id: i64) -> bool {
        self.stop_at_eog && self.text.is_some_and(|t| u32::try_from(id).is_ok_and(|i| t.is_eog(i)))
    }
}

/// Parses `--prompt`.
pub(crate) fn parse_prompt(text: &str) -> Result<Vec<i64>, String> {
    let ids: Result<Vec<i64>, _> = text.split(',').map(|s| s.trim().parse::<i64>()).collect();
    match ids {
        Ok(v) if !v.is_empty() && v.iter().all(|&x| x >= 0) => Ok(v),
        _ => Err(format!("`--prompt {text}`: expected comma-separated non-negative token ids, as in `1,2,3`")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_prompt;

    #[test]
    fn prompts() {
        assert_eq!(parse_prompt("1,2, 3").unwrap(), vec![1, 2, 3]);
        assert!(parse_prompt("").is_err());
        assert!(parse_prompt("1,,2").is_err());
        assert!(parse_prompt("-1").is_err());
        assert!(parse_prompt("a").is_err());
    }
}
