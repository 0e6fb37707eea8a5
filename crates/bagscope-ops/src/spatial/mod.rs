//! Where things are: the transform tree over a recording ([`tf`], with the robot's frames from
//! its URDF and joint states), robot models ([`robot`]: URDF, kinematics, meshes) and the 3D
//! scene at a time ([`scene`]); cameras' calibrations ([`camera`]: projection, rectification); positions on the Earth ([`geo`]: GPS tracks, GeoJSON,
//! Web Mercator, GPX/KML/GeoJSON out).

pub mod camera;
pub mod geo;
pub mod robot;
pub mod scene;
pub mod tf;
