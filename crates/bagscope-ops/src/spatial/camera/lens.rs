//! The lens models, as OpenCV computes them: `plumb_bob` and `rational_polynomial` as
//! `cv::projectPoints` does (radial `k1…k6`, tangential `p1 p2`, thin prism `s1…s4`), and
//! `equidistant` as `cv::fisheye::projectPoints` (`θ(1 + k1θ² + k2θ⁴ + k3θ⁶ + k4θ⁸)`).

/// A lens model's name in `CameraInfo.distortion_model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Model {
    /// No distortion (an empty model and no coefficients, or all of them zero).
    None,
    /// Brown-Conrady: `k1 k2 p1 p2 k3` (OpenCV's first five).
    PlumbBob,
    /// OpenCV's rational model: `k1 k2 p1 p2 k3 k4 k5 k6` (and thin prism `s1…s4` beyond).
    RationalPolynomial,
    /// The fisheye (Kannala-Brandt) model: `k1 k2 k3 k4` on the angle from the axis.
    Equidistant,
}

impl Model {
    /// The model named `name` (ROS's names; Foxglove's `kannala_brandt` and OpenCV's
    /// `fisheye` are the equidistant model), or `None` for a name bagscope does not know.
    pub fn parse(name: &str) -> Option<Model> {
        Some(match name.trim() {
            "" | "none" => Model::None,
            "plumb_bob" | "radtan" => Model::PlumbBob,
            "rational_polynomial" => Model::RationalPolynomial,
            "equidistant" | "fisheye" | "kannala_brandt" => Model::Equidistant,
            _ => return None,
        })
    }

    /// The name ROS writes.
    pub fn name(self) -> &'static str {
        match self {
            Model::None => "none",
            Model::PlumbBob => "plumb_bob",
            Model::RationalPolynomial => "rational_polynomial",
            Model::Equidistant => "equidistant",
        }
    }

    /// The numbers of coefficients the model takes (OpenCV's lengths for its own models).
    pub fn lengths(self) -> &'static [usize] {
        match self {
            Model::None => &[0],
            Model::PlumbBob => &[4, 5, 8, 12, 14],
            Model::RationalPolynomial => &[8, 12, 14],
            Model::Equidistant => &[4],
        }
    }
}

/// The coefficients of one model, padded to their full length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lens {
    /// The model.
    pub model: Model,
    /// `k1 k2 p1 p2 k3 k4 k5 k6 s1 s2 s3 s4` (pinhole models) or `k1 k2 k3 k4` (fisheye).
    c: [f64; 12],
    /// How many were given.
    n: usize,
}

impl Lens {
    /// A lens of `model` with `d` (checked: a length the model takes, every number finite;
    /// OpenCV's tilt `τx τy` must be zero, as bagscope does not model a tilted sensor).
    pub fn new(model: Model, d: &[f64]) -> Result<Lens, String> {
        if let Some(i) = d.iter().position(|v| !v.is_finite()) {
            return Err(format!("distortion coefficient D[{i}] is {}", d[i]));
        }
        let model = if model != Model::Equidistant && d.iter().all(|&v| v == 0.0) {
            Model::None
        } else {
            model
        };
        if model == Model::None {
            return Ok(Lens {
                model,
                c: [0.0; 12],
                n: 0,
            });
        }
        if !model.lengths().contains(&d.len()) {
            return Err(format!(
                "{} takes {} distortion coefficients, D has {}",
                model.name(),
                model
                    .lengths()
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                d.len()
            ));
        }
        if d.len() == 14 && (d[12] != 0.0 || d[13] != 0.0) {
            return Err("a tilted sensor (D[12], D[13] not zero) is not supported".into());
        }
        let mut c = [0.0; 12];
        let n = d.len().min(12);
        c[..n].copy_from_slice(&d[..n]);
        Ok(Lens { model, c, n })
    }

    /// The coefficients as given (none for an undistorted lens; a tilt's two zeros left out).
    pub fn coefficients(&self) -> &[f64] {
        &self.c[..self.n]
    }

    /// An undistorted lens.
    pub const NONE: Lens = Lens {
        model: Model::None,
        c: [0.0; 12],
        n: 0,
    };

    /// Where normalised coordinates `(x, y)` (`X/Z`, `Y/Z`) land after the lens, still
    /// normalised (multiply by `fx`, add `cx` for the pixel).
    pub fn distort(&self, x: f64, y: f64) -> (f64, f64) {
        let c = &self.c;
        match self.model {
            Model::None => (x, y),
            Model::PlumbBob | Model::RationalPolynomial => {
                let r2 = x * x + y * y;
                let r4 = r2 * r2;
                let r6 = r4 * r2;
                let a1 = 2.0 * x * y;
                let a2 = r2 + 2.0 * x * x;
                let a3 = r2 + 2.0 * y * y;
                let cdist = 1.0 + c[0] * r2 + c[1] * r4 + c[4] * r6;
                let icdist2 = 1.0 / (1.0 + c[5] * r2 + c[6] * r4 + c[7] * r6);
                (
                    x * cdist * icdist2 + c[2] * a1 + c[3] * a2 + c[8] * r2 + c[9] * r4,
                    y * cdist * icdist2 + c[2] * a3 + c[3] * a1 + c[10] * r2 + c[11] * r4,
                )
            }
            Model::Equidistant => {
                let r = (x * x + y * y).sqrt();
                let theta = r.atan();
                let t2 = theta * theta;
                let t4 = t2 * t2;
                let t6 = t4 * t2;
                let t8 = t4 * t4;
                let theta_d = theta * (1.0 + c[0] * t2 + c[1] * t4 + c[2] * t6 + c[3] * t8);
                let cdist = if r > 1e-8 { theta_d / r } else { 1.0 };
                (x * cdist, y * cdist)
            }
        }
    }

    /// The normalised coordinates that [`Lens::distort`] takes to `(xd, yd)`, found by
    /// iteration as `cv::undistortPoints` does (`None` where it does not settle).
    pub fn undistort(&self, xd: f64, yd: f64) -> Option<(f64, f64)> {
        if self.model == Model::None {
            return Some((xd, yd));
        }
        let (mut x, mut y) = (xd, yd);
        for _ in 0..50 {
            let (dx, dy) = self.distort(x, y);
            let (ex, ey) = (dx - xd, dy - yd);
            if !(ex.is_finite() && ey.is_finite()) {
                return None;
            }
            if ex.abs() < 1e-12 && ey.abs() < 1e-12 {
                return Some((x, y));
            }
            x -= ex;
            y -= ey;
        }
        let (dx, dy) = self.distort(x, y);
        ((dx - xd).hypot(dy - yd) < 1e-6).then_some((x, y))
    }
}

/// `cv::projectPoints` with no rotation or translation (`model` pinhole) or
/// `cv::fisheye::projectPoints` (`model` equidistant): each point `X Y Z` of the camera's frame
/// to its pixel through `K` (`fx 0 cx / 0 fy cy / 0 0 1`; a skew is not used, as OpenCV does
/// not use it) and the lens. A point at `Z = 0` is taken at `Z = 1`, as OpenCV does.
pub fn project_points(points: &[[f64; 3]], k: &[f64; 9], lens: &Lens) -> Vec<[f64; 2]> {
    let (fx, fy, cx, cy) = (k[0], k[4], k[2], k[5]);
    points
        .iter()
        .map(|p| {
            let inv_z = if p[2] != 0.0 { 1.0 / p[2] } else { 1.0 };
            let (xd, yd) = lens.distort(p[0] * inv_z, p[1] * inv_z);
            [fx * xd + cx, fy * yd + cy]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_by_name_and_length() {
        assert_eq!(Model::parse("plumb_bob"), Some(Model::PlumbBob));
        assert_eq!(Model::parse("kannala_brandt"), Some(Model::Equidistant));
        assert_eq!(Model::parse("mei"), None);
        assert!(Lens::new(Model::PlumbBob, &[0.1, 0.0, 0.0]).is_err());
        assert!(Lens::new(Model::PlumbBob, &[0.1, f64::NAN, 0.0, 0.0, 0.0]).is_err());
        // All zero: no distortion, whatever the length.
        assert_eq!(
            Lens::new(Model::PlumbBob, &[0.0; 3]).unwrap().model,
            Model::None
        );
    }

    #[test]
    fn undistort_inverts_distort() {
        let lens = Lens::new(
            Model::RationalPolynomial,
            &[0.1, -0.05, 0.001, -0.002, 0.01, 0.05, 0.0, 0.002],
        )
        .unwrap();
        let fish = Lens::new(Model::Equidistant, &[0.05, -0.01, 0.002, -0.001]).unwrap();
        for l in [lens, fish] {
            for &(x, y) in &[(0.0, 0.0), (0.3, -0.2), (-0.5, 0.4), (0.7, 0.1)] {
                let (xd, yd) = l.distort(x, y);
                let (u, v) = l.undistort(xd, yd).unwrap();
                assert!(
                    (u - x).abs() < 1e-9 && (v - y).abs() < 1e-9,
                    "{l:?} {x} {y}"
                );
            }
        }
    }
}
