//! Checks of the generator's output against its own ground truth and the shape of real data.
