//go:build race

package main

// raceDetector: this test binary was built with -race, whose shadow
// memory multiplies a process's resident size (a lab serve of 400 MiB
// peaked at 1.3 GiB), so resident-memory bounds do not apply to it.
const raceDetector = true
