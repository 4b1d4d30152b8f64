//! Interpretable images of slices: colour maps, clipping, PNG with axis annotation, JSON sidecars.
