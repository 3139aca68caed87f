//go:build !linux

package main

// adviseHugePages does nothing but on Linux (hugepages_linux.go).
func adviseHugePages(size int) (begin, end uintptr) { return 0, 0 }
