"""The cube unit's data path: fractal geometry (``fractal``), moves into the cube (LoadData, DN2NZ, img2col)
and out of it (Mmad, Fixpipe)."""
