package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// outFile is a file a command writes for the user (--vcd, its .gtkw,
// --pcap). It is written under a temporary name beside the user's file and
// renamed into place by place, so that a run refused or failed halfway
// leaves whatever file was there untouched. A path that exists and is not a
// regular file (/dev/null, a fifo) is written in place: it cannot be
// replaced and holds nothing to lose.
type outFile struct {
	flag, path string // "--vcd" and the name the user gave, for messages
	target     string // where place puts it: path with symlinks resolved
	tmp        string // the temporary name; "" when written in place
	f          *os.File
	err        error // the first write error
}

// createOut opens the temporary file of path (the value of flag).
func createOut(flag, path string) (*outFile, error) {
	o := &outFile{flag: flag, path: path, target: path}
	if info, err := os.Stat(path); err == nil {
		switch {
		case info.IsDir():
			return nil, usagef("%s %s is a directory; give a file name such as %s", flag, path, filepath.Join(path, "out"))
		case !info.Mode().IsRegular():
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return nil, o.fail(err)
			}
			o.f = f
			return o, nil
		}
		// A symlink keeps pointing at the file it named.
		if t, err := filepath.EvalSymlinks(path); err == nil {
			o.target = t
		}
	}
	dir, base := filepath.Split(o.target)
	for i := 0; ; i++ {
		tmp := filepath.Join(dir, fmt.Sprintf(".%s.hwcoll-%d-%d", base, os.Getpid(), i))
		// 0o666 less the umask, as os.Create: the file placed gets the
		// permissions a plain create would have given it.
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return nil, o.fail(err)
		}
		o.f, o.tmp = f, tmp
		return o, nil
	}
}

// Write writes to the file and keeps the first error, which close reports
// naming the flag whoever wrote (a VCD writer, a capture) did with it.
func (o *outFile) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	if err != nil && o.err == nil {
		o.err = err
	}
	return n, err
}

// close closes the file; a write or close error discards it and is one
// usage line naming the flag.
func (o *outFile) close() error {
	if o.f == nil {
		return nil
	}
	err := o.err
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	o.f = nil
	if err != nil {
		o.discard()
		return o.fail(err)
	}
	return nil
}

// place renames the closed file into place.
func (o *outFile) place() error {
	if o.tmp == "" {
		return nil
	}
	if err := os.Rename(o.tmp, o.target); err != nil {
		o.discard()
		return o.fail(err)
	}
	o.tmp = ""
	return nil
}

// commit is close then place.
func (o *outFile) commit() error {
	if err := o.close(); err != nil {
		return err
	}
	return o.place()
}

// discard closes the file and removes the temporary one; the user's file
// is as it was. It may be called more than once.
func (o *outFile) discard() {
	if o.f != nil {
		o.f.Close()
		o.f = nil
	}
	if o.tmp != "" {
		os.Remove(o.tmp)
		o.tmp = ""
	}
}

// fail is err as the usage line "--vcd PATH: reason", without the
// temporary name an *os.PathError would show.
func (o *outFile) fail(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return usagef("%s %s: %v", o.flag, o.path, err)
}
