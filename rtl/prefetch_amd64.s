#include "textflag.h"

// func prefetchRecord(p unsafe.Pointer)
TEXT ·prefetchRecord(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 0(AX)
	PREFETCHT0 64(AX)
	PREFETCHT0 128(AX)
	PREFETCHT0 192(AX)
	RET

// func PrefetchLine(p unsafe.Pointer)
TEXT ·PrefetchLine(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 0(AX)
	RET
