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
//
// With -inline it runs spinA and spinI 1:2 instead: spinI's loop calls mix,
// which the compiler inlines, so part of its samples are main.mix frames
// inlined into main.spinI (the inline tree of .gopclntab and DWARF).
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

// mix is small enough for the compiler to inline into spinI's loop, and
// holds the loop's chain of multiplies: most of spinI's time is in it.
func mix(x uint64, i int) uint64 {
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 32
	x *= 0x94d049bb133111eb
	return x + uint64(i)
}

//go:noinline
func spinI(n int) {
	var w [8]uint64

	for i := 0; i < n; i++ {
		w[i&7] = mix(w[(i+1)&7], i)
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
	inline := flag.Bool("inline", false, "run spinA and spinI (inlining mix) 1:2 instead")
	flag.Parse()
	runtime.LockOSThread()

	var a, b, c int64
	limit := int64(*cpu * 1e9)
	for *inline && cpuNs(clockProcessCPU) < limit {
		timed(spinA, *iters, &a)
		timed(spinI, 2**iters, &b)
	}
	if *inline {
		fmt.Fprintf(os.Stdout, "spinA %d\nspinI %d\n", a, b)
		return
	}
	for cpuNs(clockProcessCPU) < limit {
		timed(spinA, *iters, &a)
		timed(spinB, 2**iters, &b)
		timed(spinC, 3**iters, &c)
	}
	fmt.Fprintf(os.Stdout, "spinA %d\nspinB %d\nspinC %d\n", a, b, c)
}
