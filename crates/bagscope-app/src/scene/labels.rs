//! Labels that would overlap are decluttered: the hovered one first, then the followed
//! frame's, then the nearest to the camera, each drawn only where it overlaps none drawn
//! before it; the others show when the pointer comes near their point.

use egui::{Pos2, Rect};

/// A label that could be drawn: where its text would go, how far it is, whether it is
/// hovered or chosen.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    pub rect: Rect,
    /// Distance from the camera (m).
    pub depth: f32,
    /// Hovered or chosen: drawn whatever else is there.
    pub first: bool,
}

/// Which candidates are drawn (the same order as given): no two drawn ones overlap, except
/// that those marked `first` are all drawn.
pub fn declutter(c: &[Candidate]) -> Vec<bool> {
    let mut order: Vec<usize> = (0..c.len()).collect();
    order.sort_by(|&a, &b| {
        c[b].first
            .cmp(&c[a].first)
            .then(c[a].depth.total_cmp(&c[b].depth))
    });
    let mut drawn = vec![false; c.len()];
    let mut taken: Vec<Rect> = Vec::new();
    for i in order {
        let r = c[i].rect.expand(1.0);
        if c[i].first || !taken.iter().any(|t| t.intersects(r)) {
            drawn[i] = true;
            taken.push(r);
        }
    }
    drawn
}

/// Whether the pointer is near a label's point (it is drawn then, whatever it overlaps).
pub fn near(pointer: Option<Pos2>, at: Pos2) -> bool {
    pointer.is_some_and(|p| p.distance(at) < 14.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(x: f32, y: f32, depth: f32, first: bool) -> Candidate {
        Candidate {
            rect: Rect::from_min_size(Pos2::new(x, y), egui::vec2(60.0, 14.0)),
            depth,
            first,
        }
    }

    #[test]
    fn the_nearest_of_overlapping_labels_is_drawn() {
        // Three on one spot, one apart: the nearest of the three and the one apart.
        let d = declutter(&[
            c(0.0, 0.0, 5.0, false),
            c(10.0, 4.0, 2.0, false),
            c(20.0, 2.0, 9.0, false),
            c(200.0, 0.0, 9.0, false),
        ]);
        assert_eq!(d, [false, true, false, true]);
        // A hovered one wins over the nearest.
        let d = declutter(&[c(0.0, 0.0, 5.0, true), c(10.0, 4.0, 2.0, false)]);
        assert_eq!(d, [true, false]);
    }
}
