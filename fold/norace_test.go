//go:build !race

package fold

const raceDetector = false
