; irad's native runtime (see native/checks.py), linked into every JIT module
; before it is optimised (tier 0 links it as object code compiled once per
; process: llvm_jit). native_checks.runtime_library fills in the placeholders
; (KEY etc.).
;
; A call from Python goes through an entry (written per function by
; native_checks.entries, which calls the functions below that are not
; internal), whose frame holds a context:
;
;     [0, ${JMP_BYTES})              the jmp_buf of its _setjmp
;     [${JMP_BYTES}, +16)            the head of a list {prev, next} of the
;                                    buffers allocated during the call
;
; and publishes it in the pthread key ${JMP_KEY}, so each thread sees its own.
; A failed check _longjmps there with its id. Every buffer native code
; allocates has a header of ${HEADER} bytes before its memory, {prev, next,
; base, capacity}: base is what malloc returned (free takes it), capacity its
; size, and prev/next link it into the list of the running call. The entry frees what is still on
; the list when a check failed, and unlinks it (each header then points at
; itself) when the call returned, so those buffers belong to their Python
; owners (native.NativeBuffer frees `base`).

declare i32 @_setjmp(ptr) returns_twice
declare void @_longjmp(ptr, i32) noreturn
declare ptr @malloc(i64)
@${CACHE} = external global i8  ; the buffer cache, bound by native_buffers.symbol()
declare void @free(ptr)
declare void @abort() noreturn
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare ptr @pthread_getspecific(i32)
declare i32 @pthread_setspecific(i32, ptr)
declare i64 @pthread_self()
declare i32 @pthread_getattr_np(i64, ptr)
declare i32 @pthread_attr_getstack(ptr, ptr, ptr)
declare i32 @pthread_attr_destroy(ptr)
declare ptr @llvm.addressofreturnaddress.p0()
declare i64 @llvm.umin.i64(i64, i64)

; ---- failed checks ---------------------------------------------------------------
define void @irad_check_failed(i32 %id) noreturn cold noinline {
  %context = call ptr @pthread_getspecific(i32 ${JMP_KEY})
  call void @_longjmp(ptr %context, i32 %id)
  unreachable
}

; The id of the failed check an entry returned NaN for (0 if none), once.
define i32 @irad_failure() {
  %id = call ptr @pthread_getspecific(i32 ${FAILED_KEY})
  call i32 @pthread_setspecific(i32 ${FAILED_KEY}, ptr null)
  %n = ptrtoint ptr %id to i32
  ret i32 %n
}

define void @irad_failed_with_nan(i32 %id) cold noinline {
  %p = inttoptr i32 %id to ptr
  call i32 @pthread_setspecific(i32 ${FAILED_KEY}, ptr %p)
  ret void
}

; A buffer of %bytes could not be allocated (malloc returned NULL, or the size
; is beyond any machine: a negative size computed from a run-time int): fail
; check ${OUT_OF_MEMORY} with the size kept for irad_failed_allocation().
define void @irad_out_of_memory(i64 %bytes) noreturn cold noinline {
  %p = inttoptr i64 %bytes to ptr
  call i32 @pthread_setspecific(i32 ${ALLOCATION_KEY}, ptr %p)
  call void @irad_check_failed(i32 ${OUT_OF_MEMORY})
  unreachable
}

; The size of the allocation that failed check ${OUT_OF_MEMORY} in this thread.
define i64 @irad_failed_allocation() {
  %p = call ptr @pthread_getspecific(i32 ${ALLOCATION_KEY})
  %bytes = ptrtoint ptr %p to i64
  ret i64 %bytes
}

; ---- the stack of recursive functions ----------------------------------------------
; The lowest address this thread's recursive functions may reach: the bottom
; of its stack plus an eighth of the stack, at most ${STACK_MARGIN} bytes, left
; for the non-recursive calls below the deepest recursive frame. Asked of
; pthread_getattr_np once per thread (for the main thread it reads
; /proc/self/maps), then kept in the pthread key ${FLOOR_KEY}; 1 (no check)
; if the stack is unknown.
define i64 @irad_stack_floor() {
entry:
  %known = call ptr @pthread_getspecific(i32 ${FLOOR_KEY})
  %knowni = ptrtoint ptr %known to i64
  %ask = icmp eq i64 %knowni, 0
  br i1 %ask, label %first, label %done
first:
  %asked = call i64 @irad_ask_stack_floor()
  br label %done
done:
  %floor = phi i64 [ %knowni, %entry ], [ %asked, %first ]
  ret i64 %floor
}

define internal i64 @irad_ask_stack_floor() cold noinline {
entry:
  %attr = alloca [128 x i8], align 16  ; pthread_attr_t: 56 bytes on x86-64, 64 on aarch64
  %low = alloca ptr
  %size = alloca i64
  %self = call i64 @pthread_self()
  %err = call i32 @pthread_getattr_np(i64 %self, ptr %attr)
  %found = icmp eq i32 %err, 0
  br i1 %found, label %stack, label %done
stack:
  call i32 @pthread_attr_getstack(ptr %attr, ptr %low, ptr %size)
  call i32 @pthread_attr_destroy(ptr %attr)
  %lowp = load ptr, ptr %low
  %lowi = ptrtoint ptr %lowp to i64
  %n = load i64, ptr %size
  %eighth = lshr i64 %n, 3
  %margin = call i64 @llvm.umin.i64(i64 %eighth, i64 ${STACK_MARGIN})
  %bottom = add i64 %lowi, %margin
  br label %done
done:
  %floor = phi i64 [ %bottom, %stack ], [ 1, %entry ]
  %p = inttoptr i64 %floor to ptr
  call i32 @pthread_setspecific(i32 ${FLOOR_KEY}, ptr %p)
  ret i64 %floor
}

; At the entry of a recursive function: fail check %id if its frame is below
; the floor.
define void @irad_stack_check(i64 %floor, i32 %id) alwaysinline {
  %here = call ptr @llvm.addressofreturnaddress.p0()
  %herei = ptrtoint ptr %here to i64
  %deep = icmp ult i64 %herei, %floor
  br i1 %deep, label %fail, label %fine, !prof !0
fail:
  call void @irad_check_failed(i32 %id)
  unreachable
fine:
  ret void
}

; ---- buffers (finalize-memref-to-llvm{use-generic-functions}) -----------------------
; A buffer's header is {prev, next, base, capacity}: capacity is the size of
; the block malloc returned at base. Large blocks come from and go back to the
; process's buffer cache (native/buffers.py) at @${CACHE}: {mutex, first, bytes,
; capacity, hits, misses} at offsets 0, ${FIRST}, ${BYTES}, ${CAPACITY}, ${HITS},
; ${MISSES}. A cached block is listed by its header, {next cached, 1, base,
; capacity}: the 1 marks it as cached.
define internal void @irad_track(ptr %header, ptr %base, i64 %capacity) alwaysinline {
  %at_base = getelementptr i8, ptr %header, i64 16
  store ptr %base, ptr %at_base
  %at_capacity = getelementptr i8, ptr %header, i64 24
  store i64 %capacity, ptr %at_capacity
  %context = call ptr @pthread_getspecific(i32 ${JMP_KEY})
  %head = getelementptr i8, ptr %context, i64 ${JMP_BYTES}
  %head_next = getelementptr i8, ptr %head, i64 8
  %first = load ptr, ptr %head_next
  store ptr %head, ptr %header
  %header_next = getelementptr i8, ptr %header, i64 8
  store ptr %first, ptr %header_next
  store ptr %header, ptr %first
  store ptr %header, ptr %head_next
  ret void
}

define internal void @irad_count(ptr %cache, i64 %offset) alwaysinline {
  %at = getelementptr i8, ptr %cache, i64 %offset
  %n = load i64, ptr %at
  %n1 = add i64 %n, 1
  store i64 %n1, ptr %at
  ret void
}

; A block of at least %total bytes and its capacity: the smallest cached block
; that fits and is at most twice as large, else malloc's.
define internal { ptr, i64 } @irad_obtain(i64 %total) {
entry:
  %small = icmp ult i64 %total, ${CACHE_MIN}
  br i1 %small, label %fresh, label %look
look:
  %cache = getelementptr i8, ptr @${CACHE}, i64 0
  call i32 @pthread_mutex_lock(ptr %cache)
  %at_first = getelementptr i8, ptr %cache, i64 ${FIRST}
  %limit = shl i64 %total, 1
  br label %scan
scan:
  %link = phi ptr [ %at_first, %look ], [ %node, %consider ]  ; where the pointer to %node is
  %best_link = phi ptr [ null, %look ], [ %best_link2, %consider ]
  %best = phi i64 [ -1, %look ], [ %best2, %consider ]
  %node = load ptr, ptr %link
  %end = icmp eq ptr %node, null
  br i1 %end, label %scanned, label %consider
consider:
  %at_capacity = getelementptr i8, ptr %node, i64 24
  %capacity = load i64, ptr %at_capacity
  %fits = icmp uge i64 %capacity, %total
  %modest = icmp ule i64 %capacity, %limit
  %smaller = icmp ult i64 %capacity, %best
  %fits_modest = and i1 %fits, %modest
  %take = and i1 %fits_modest, %smaller
  %best_link2 = select i1 %take, ptr %link, ptr %best_link
  %best2 = select i1 %take, i64 %capacity, i64 %best
  br label %scan
scanned:
  %found = icmp ne ptr %best_link, null
  br i1 %found, label %hit, label %miss
hit:
  %chosen = load ptr, ptr %best_link
  %after = load ptr, ptr %chosen
  store ptr %after, ptr %best_link
  %at_bytes = getelementptr i8, ptr %cache, i64 ${BYTES}
  %bytes = load i64, ptr %at_bytes
  %bytes1 = sub i64 %bytes, %best
  store i64 %bytes1, ptr %at_bytes
  call void @irad_count(ptr %cache, i64 ${HITS})
  call i32 @pthread_mutex_unlock(ptr %cache)
  %at_base = getelementptr i8, ptr %chosen, i64 16
  %reused = load ptr, ptr %at_base
  %r0 = insertvalue { ptr, i64 } poison, ptr %reused, 0
  %r1 = insertvalue { ptr, i64 } %r0, i64 %best, 1
  ret { ptr, i64 } %r1
miss:
  call void @irad_count(ptr %cache, i64 ${MISSES})
  call i32 @pthread_mutex_unlock(ptr %cache)
  br label %fresh
fresh:
  %base = call ptr @malloc(i64 %total)
  %f0 = insertvalue { ptr, i64 } poison, ptr %base, 0
  %f1 = insertvalue { ptr, i64 } %f0, i64 %total, 1
  ret { ptr, i64 } %f1
}

; A block for a buffer of %size bytes that needs %total with its header and
; alignment; out of memory (a failed check) if there is none. Sizes above
; 2^62 fail before %total can wrap around.
define internal { ptr, i64 } @irad_obtain_or_fail(i64 %size, i64 %total) alwaysinline {
entry:
  %huge = icmp ugt i64 %size, 4611686018427387904
  br i1 %huge, label %refused, label %obtain, !prof !0
obtain:
  %block = call { ptr, i64 } @irad_obtain(i64 %total)
  %base = extractvalue { ptr, i64 } %block, 0
  %none = icmp eq ptr %base, null
  br i1 %none, label %refused, label %got, !prof !0
refused:
  call void @irad_out_of_memory(i64 %size)
  unreachable
got:
  ret { ptr, i64 } %block
}

define ptr @_mlir_memref_to_llvm_alloc(i64 %size) {
  %total = add i64 %size, ${HEADER}
  %block = call { ptr, i64 } @irad_obtain_or_fail(i64 %size, i64 %total)
  %base = extractvalue { ptr, i64 } %block, 0
  %capacity = extractvalue { ptr, i64 } %block, 1
  call void @irad_track(ptr %base, ptr %base, i64 %capacity)
  %memory = getelementptr i8, ptr %base, i64 ${HEADER}
  ret ptr %memory
}

define ptr @_mlir_memref_to_llvm_aligned_alloc(i64 %requested, i64 %size) {
  %small = icmp ult i64 %requested, 16  ; the header's pointers stay aligned
  %alignment = select i1 %small, i64 16, i64 %requested
  %room = add i64 %alignment, ${HEADER}
  %total = add i64 %size, %room
  %block = call { ptr, i64 } @irad_obtain_or_fail(i64 %size, i64 %total)
  %base = extractvalue { ptr, i64 } %block, 0
  %capacity = extractvalue { ptr, i64 } %block, 1
  %basei = ptrtoint ptr %base to i64
  %past = add i64 %basei, %room
  %last = sub i64 %past, 1
  %mask = sub i64 0, %alignment
  %memoryi = and i64 %last, %mask  ; base + HEADER rounded up to the alignment
  ; an address derived from %base (not inttoptr): LLVM then knows the buffer is
  ; malloc's, aliasing nothing else, and vectorises without runtime alias checks
  %offset = sub i64 %memoryi, %basei
  %memory = getelementptr i8, ptr %base, i64 %offset
  %header = getelementptr i8, ptr %memory, i64 -${HEADER}
  call void @irad_track(ptr %header, ptr %base, i64 %capacity)
  ret ptr %memory
}

define void @_mlir_memref_to_llvm_free(ptr %memory) {
entry:
  %header = getelementptr i8, ptr %memory, i64 -${HEADER}
  %header_next = getelementptr i8, ptr %header, i64 8
  %next = load ptr, ptr %header_next
  %nexti = ptrtoint ptr %next to i64
  %cached = icmp eq i64 %nexti, 1
  br i1 %cached, label %twice, label %unlink, !prof !0
twice:  ; freed again while in the cache: a bug in irad, stop before the block is shared
  call void @abort()
  unreachable
unlink:
  %prev = load ptr, ptr %header
  %prev_next = getelementptr i8, ptr %prev, i64 8
  store ptr %next, ptr %prev_next
  store ptr %prev, ptr %next
  %at_base = getelementptr i8, ptr %header, i64 16
  %base = load ptr, ptr %at_base
  %at_capacity = getelementptr i8, ptr %header, i64 24
  %capacity = load i64, ptr %at_capacity
  %small = icmp ult i64 %capacity, ${CACHE_MIN}
  br i1 %small, label %release, label %offer
offer:
  %cache = getelementptr i8, ptr @${CACHE}, i64 0
  call i32 @pthread_mutex_lock(ptr %cache)
  %at_bytes = getelementptr i8, ptr %cache, i64 ${BYTES}
  %bytes = load i64, ptr %at_bytes
  %at_limit = getelementptr i8, ptr %cache, i64 ${CAPACITY}
  %limit = load i64, ptr %at_limit
  %bytes1 = add i64 %bytes, %capacity
  %room = icmp ule i64 %bytes1, %limit
  br i1 %room, label %keep, label %full
keep:
  %at_first = getelementptr i8, ptr %cache, i64 ${FIRST}
  %first = load ptr, ptr %at_first
  store ptr %first, ptr %header
  %mark = inttoptr i64 1 to ptr
  store ptr %mark, ptr %header_next
  store ptr %header, ptr %at_first
  store i64 %bytes1, ptr %at_bytes
  call i32 @pthread_mutex_unlock(ptr %cache)
  ret void
full:
  call i32 @pthread_mutex_unlock(ptr %cache)
  br label %release
release:
  call void @free(ptr %base)
  ret void
}

; The list of a call that returned: each buffer left (a result) now belongs to
; Python; its header points at itself, so a later free unlinks nothing.
define void @irad_hand_over(ptr %head) {
entry:
  %head_next = getelementptr i8, ptr %head, i64 8
  %first = load ptr, ptr %head_next
  br label %loop
loop:
  %node = phi ptr [ %first, %entry ], [ %next, %body ]
  %end = icmp eq ptr %node, %head
  br i1 %end, label %done, label %body
body:
  %node_next = getelementptr i8, ptr %node, i64 8
  %next = load ptr, ptr %node_next
  store ptr %node, ptr %node
  store ptr %node, ptr %node_next
  br label %loop
done:
  ret void
}

; The list of a call that failed a check: free every buffer on it.
define void @irad_free_all(ptr %head) cold noinline {
entry:
  %head_next = getelementptr i8, ptr %head, i64 8
  %first = load ptr, ptr %head_next
  br label %loop
loop:
  %node = phi ptr [ %first, %entry ], [ %next, %body ]
  %end = icmp eq ptr %node, %head
  br i1 %end, label %done, label %body
body:
  %node_next = getelementptr i8, ptr %node, i64 8
  %next = load ptr, ptr %node_next
  %at_base = getelementptr i8, ptr %node, i64 16
  %base = load ptr, ptr %at_base
  call void @free(ptr %base)
  br label %loop
done:
  ret void
}

!0 = !{!"branch_weights", i32 1, i32 1048575}
