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

// func PrefetchLines(p unsafe.Pointer, n int)
TEXT ·PrefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	PREFETCHT0 0(AX)
	ADDQ $64, AX
	DECQ CX
	JNZ loop
done:
	RET
