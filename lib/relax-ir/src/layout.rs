//! Layout strings of the layout-aware ops (`NCHW`, `NHWC`, `OIHW`, ...): the permutation
//! that brings a layout's axes into canonical order, shared by the interpreter's kernels
//! and the legalizations.

/// The positions of `first`, `second`, then the other letters of `layout`, in order
/// (`permutation_to("NHWC", 'N', 'C')` is `[0, 3, 1, 2]`); `None` when a letter is missing.
pub fn permutation_to(layout: &str, first: char, second: char) -> Option<Vec<usize>> {
    let mut p = vec![layout.find(first)?, layout.find(second)?];
    p.extend(layout.char_indices().filter(|&(_, c)| c != first && c != second).map(|(i, _)| i));
    Some(p)
}

/// The inverse of a permutation (`np.argsort`).
pub fn inverse(p: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; p.len()];
    for (i, &x) in p.iter().enumerate() {
        inv[x] = i;
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutes_and_inverts() {
        let p = permutation_to("NHWC", 'N', 'C').unwrap();
        assert_eq!(p, vec![0, 3, 1, 2]);
        assert_eq!(inverse(&p), vec![0, 2, 3, 1]);
        assert_eq!(permutation_to("NHW", 'N', 'C'), None);
    }
}
