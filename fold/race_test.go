//go:build race

package fold

// raceDetector says the tests run under go test -race, which slows the
// worker's compiled wasm and its Go calls ten times and more.
const raceDetector = true
