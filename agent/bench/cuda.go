package bench

import (
	"errors"
	"fmt"
)

// driver is the part of the CUDA driver API the GPU bench uses. The real
// one (cuda_cgo.go) opens libcuda.so.1 with dlopen; tests use a fake that
// can fail any call, refuse a module or hang. Handles are opaque numbers
// (C pointers or CUdeviceptr values the Go side never dereferences).
//
// A driver is used from one OS thread at a time (a CUDA context is current
// on the thread that made it): the caller locks its goroutine to a thread.
type driver interface {
	Init() error
	// Version is the CUDA version the driver supports, e.g. 13000 for 13.0.
	Version() (int, error)
	DeviceCount() (int, error)
	DeviceName(dev int) (string, error)
	// DeviceUUID is the device's 16-byte UUID as NVML prints it
	// ("GPU-xxxxxxxx-…"), or "" where the driver cannot say.
	DeviceUUID(dev int) string
	Attribute(attr, dev int) (int, error)
	CtxCreate(dev int) (uintptr, error)
	CtxDestroy(ctx uintptr)
	// MemInfo is the free and total device memory, bytes, of the current context.
	MemInfo() (free, total uint64, err error)
	// ModuleLoad compiles ptx (the driver's JIT); log is the JIT's error log
	// when it refuses.
	ModuleLoad(ptx []byte) (mod uintptr, log string, err error)
	ModuleUnload(mod uintptr)
	Function(mod uintptr, name string) (uintptr, error)
	// Occupancy is how many blocks of block threads fit on one SM at once.
	Occupancy(fn uintptr, block int) (int, error)
	// Launch runs fn on grid×block threads on stream; params are the
	// kernel's parameters, each passed as 8 bytes (little-endian: a u32
	// parameter reads the low half).
	Launch(fn uintptr, grid, block int, stream uintptr, params ...uint64) error
	MemAlloc(bytes uint64) (uintptr, error)
	MemFree(p uintptr)
	MemHostAlloc(bytes uint64) (uintptr, error)
	MemFreeHost(p uintptr)
	CopyHtoD(dst, src uintptr, bytes uint64, stream uintptr) error
	CopyDtoH(dst, src uintptr, bytes uint64, stream uintptr) error
	CopyDtoD(dst, src uintptr, bytes uint64, stream uintptr) error
	StreamCreate() (uintptr, error)
	StreamDestroy(s uintptr)
	EventCreate() (uintptr, error)
	EventRecord(e, stream uintptr) error
	EventSynchronize(e uintptr) error
	// EventElapsed is the time between two recorded events, milliseconds.
	EventElapsed(start, end uintptr) (float32, error)
	EventDestroy(e uintptr)
	CtxSynchronize() error
}

// Device attributes (CUdevice_attribute) the bench reads.
const (
	attrMultiprocessorCount = 16
	attrComputeMajor        = 75
	attrComputeMinor        = 76
)

// CUresult codes the bench tells apart.
const (
	cuErrOutOfMemory     = 2
	cuErrNoDevice        = 100
	cuErrInvalidPTX      = 218
	cuErrUnsupportedPTX  = 222
	cuErrNoBinaryForGPU  = 209
	cuErrInsufficientDrv = 35
	cuErrLaunchTimeout   = 702
)

// cuError is a failed driver call: the call, its CUresult and the driver's
// own words for it.
type cuError struct {
	Call string
	Code int
	Text string
}

func (e *cuError) Error() string {
	if e.Text != "" {
		return fmt.Sprintf("%s: %s (CUDA error %d)", e.Call, e.Text, e.Code)
	}
	return fmt.Sprintf("%s: CUDA error %d", e.Call, e.Code)
}

// cuCode is err's CUresult, or 0 when err is not a driver call's.
func cuCode(err error) int {
	var ce *cuError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return 0
}

// errNoDriver: libcuda.so.1 could not be opened (no NVIDIA driver, or a
// container started without GPU access), or this build cannot open it.
var errNoDriver = errors.New("no CUDA driver")
