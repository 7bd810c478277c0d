//! Opening logs (gzip detected by content) and detecting their layout. (Being written.)
