// Draws every figure.q-chart of the page (see package assets' doc for the
// markup). Filled in with the vendored Observable Plot.
