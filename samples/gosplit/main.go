// SPDX-License-Identifier: MIT

// gosplit: a Go program with a known split of its CPU time (issue 31).
// Three functions of its own, spinA, spinB and spinC, do the same work in
// the ratio 1:2:3 of iterations, each call timed by the thread's own CPU
// clock (the main goroutine is locked to its thread), until the process
// has used -cpu seconds of CPU. At the end it prints each function's CPU
// nanoseconds, the oracle the tests compare sampled shares with.
//
// Each function keeps a small array on its stack, so that the Go compiler
// gives it a frame (a leaf with none is skipped by a frame-pointer walk).
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

const (
	clockProcessCPU = 2 // CLOCK_PROCESS_CPUTIME_ID
	clockThreadCPU  = 3 // CLOCK_THREAD_CPUTIME_ID
)

func cpuNs(clock uintptr) int64 {
	var ts syscall.Timespec

	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clock, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

var sink uint64

//go:noinline
func spinA(n int) {
	var w [8]uint64

	for i := 0; i < n; i++ {
		w[i&7] = w[(i+1)&7]*6364136223846793005 + uint64(i)
	}
	sink += w[3]
}

//go:noinline
func spinB(n int) {
	var w [8]uint64

	for i := 0; i < n; i++ {
		w[i&7] = w[(i+1)&7]*6364136223846793005 + uint64(i)
	}
	sink += w[3]
}

//go:noinline
func spinC(n int) {
	var w [8]uint64

	for i := 0; i < n; i++ {
		w[i&7] = w[(i+1)&7]*6364136223846793005 + uint64(i)
	}
	sink += w[3]
}

// timed runs f(n) and adds the thread CPU time it took to *acc.
func timed(f func(int), n int, acc *int64) {
	t0 := cpuNs(clockThreadCPU)
	f(n)
	*acc += cpuNs(clockThreadCPU) - t0
}

func main() {
	cpu := flag.Float64("cpu", 2, "seconds of process CPU time to use")
	iters := flag.Int("n", 200000, "iterations of spinA per round (spinB 2x, spinC 3x)")
	flag.Parse()
	runtime.LockOSThread()

	var a, b, c int64
	limit := int64(*cpu * 1e9)
	for cpuNs(clockProcessCPU) < limit {
		timed(spinA, *iters, &a)
		timed(spinB, 2**iters, &b)
		timed(spinC, 3**iters, &c)
	}
	fmt.Fprintf(os.Stdout, "spinA %d\nspinB %d\nspinC %d\n", a, b, c)
}
