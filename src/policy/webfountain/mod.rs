//! Paper 004's WebFountain crawler (Edwards, McCurley & Tomlin, WWW10 2001).

pub mod model;
