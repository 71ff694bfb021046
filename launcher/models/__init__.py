"""Model providers behind one `Model` protocol."""
