// Command lipo joins single-architecture Mach-O executables into one
// universal (fat) binary, as Apple's lipo -create does, so that make dist
// can ship one macOS binary for Apple silicon and Intel with go alone: the
// fat file is written by github.com/blacktop/go-macho and read back with
// debug/macho to check that each slice is its input, byte for byte.
//
//	go -C scripts/lipo run . -output UNIVERSAL THIN...
//
// It is a module of its own so that the server's module does not depend on
// go-macho.
package main

import (
	"bytes"
	"debug/macho"
	"errors"
	"flag"
	"fmt"
	"os"

	gomacho "github.com/blacktop/go-macho"
)

func main() {
	output := flag.String("output", "", "the universal binary to write")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: lipo -output UNIVERSAL THIN...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *output == "" || flag.NArg() < 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := create(*output, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "lipo: %v\n", err)
		os.Exit(1)
	}
}

// create writes the universal binary output from the thin executables
// inputs, one slice each, and checks what it wrote.
func create(output string, inputs []string) error {
	thin := make([][]byte, len(inputs))
	cpus := map[macho.Cpu]string{}
	for i, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		f, err := macho.NewFile(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: not a thin Mach-O file: %w", in, err)
		}
		if prev, ok := cpus[f.Cpu]; ok {
			return fmt.Errorf("%s and %s are both %v", prev, in, f.Cpu)
		}
		cpus[f.Cpu] = in
		thin[i] = b
	}
	ff, err := gomacho.CreateFat(output, inputs...)
	if err != nil {
		os.Remove(output)
		return fmt.Errorf("writing %s: %w", output, err)
	}
	if err := ff.Close(); err != nil {
		os.Remove(output)
		return fmt.Errorf("writing %s: %w", output, err)
	}
	if err := check(output, thin); err != nil {
		os.Remove(output)
		return fmt.Errorf("%s: %w", output, err)
	}
	return os.Chmod(output, 0o755)
}

// check reads the fat file back with the standard library's reader and
// compares its slices with the thin files.
func check(name string, thin [][]byte) error {
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	f, err := macho.NewFatFile(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if len(f.Arches) != len(thin) {
		return fmt.Errorf("%d slices, want %d", len(f.Arches), len(thin))
	}
	for i, a := range f.Arches {
		end := uint64(a.Offset) + uint64(a.Size)
		if end > uint64(len(b)) || !bytes.Equal(b[a.Offset:end], thin[i]) {
			return errors.New("slice " + a.Cpu.String() + " differs from its input")
		}
	}
	return nil
}
