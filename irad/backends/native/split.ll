; irad's split products and loop nests (see native/split.py,
; native/split_loops.py): one process-wide module, compiled
; once and never freed, so its helper thread outlives every compiled module.
; native/split.py fills in the placeholders (INT etc.).
;
; @irad_parallel(run, task, n) runs run(task, 0) ... run(task, n - 1), the
; chunks of a job, on the calling thread and on one helper thread. The caller
; posts the job, wakes the helper, and claims chunks itself; so does the helper
; once it has woken and attached to the job. When no chunk is left the caller
; takes the job back if the helper has not attached (it never touches it then)
; and otherwise waits for the helper's last chunk, which is running. A helper
; that is not scheduled therefore costs the caller nothing but its chunks.
; Which chunks exist is decided by the job alone; who runs one does not change
; what it computes, so results do not depend on scheduling.
;
; One job at a time: a caller that finds the helper busy (another thread's
; job) runs its chunks itself. The helper is started by the first job of the
; process. In a process forked from this one, native/split.py's
; os.register_at_fork handler calls @irad_split_after_fork (the state is made
; afresh, a helper started by the next job); forked some other way, the child
; sees the parent's pid and runs every job on the caller.
;
; The state, @irad_split_state:
;   0    the mutex guarding everything below it (64 bytes)
;   64   the helper's condition: a job was posted (64)
;   128  the caller's condition: the helper finished (64)
;   192  i32 phase: 0 idle, 1 posted, 2 attached (the helper runs chunks), 3 finished
;   196  i32 the next chunk to claim
;   200  i32 the job's chunk count
;   204  i32 helper: 0 not started, 1 running, -1 could not be started
;   208  ptr run, 216 ptr task: the job
;   224  i32 the pid of the process the helper runs in
;   232  i64 chunks the helper ran, 240 chunks callers ran, 248 jobs taken back
;        unstarted, 256 jobs run whole because the helper was busy, 264 times
;        the helper was moved off a caller's CPU (counters)
;   272  i32 the helper's thread id (0 until it has started)
;   276  i32 1 + the CPU the helper was last kept off (0: none since)
;   280  i32 1: keep the helper off the caller's CPU (@irad_split_keep_off)
;
; Keeping the helper off the caller's CPU (@irad_keep_off): woken by the
; caller, the helper was placed by Linux on the caller's own CPU when no CPU
; was idle (a busy machine), and preempted the caller there, so the two chunks
; ran one after the other and a split product took as long as a whole one
; (docs/benchmarks.md). So before it posts a job the caller makes the helper's
; CPU affinity its own minus the CPU it runs on: a system call only when the
; caller's CPU changed since the last job.

declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_mutex_init(ptr, ptr)
declare i32 @pthread_cond_init(ptr, ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_signal(ptr)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_detach(i64)
declare i32 @pthread_sigmask(i32, ptr, ptr)
declare i32 @sigfillset(ptr)
declare i32 @getpid()
declare i32 @gettid()
declare i64 @pthread_self()
declare i32 @pthread_setname_np(i64, ptr)
declare i32 @sched_getcpu()
declare i32 @sched_getaffinity(i32, i64, ptr)
declare i32 @sched_setaffinity(i32, i64, ptr)

@irad_split_state = internal global [320 x i8] zeroinitializer, align 64
; 1: a narrow product (native_split.narrow) computes its rows in blocks of at
; most ${SMALL} multiply-adds (@irad_split_blocks; native/split.py)
@irad_blocks = internal global i32 1, align 4
@irad_helper_name = internal constant [11 x i8] c"irad-split\00"

define internal ptr @irad_at(i64 %offset) alwaysinline {
  %p = getelementptr i8, ptr @irad_split_state, i64 %offset
  ret ptr %p
}

define internal void @irad_add(i64 %offset) alwaysinline {
  %p = call ptr @irad_at(i64 %offset)
  %n = load i64, ptr %p
  %n1 = add i64 %n, 1
  store i64 %n1, ptr %p
  ret void
}

; The next chunk of the job, or -1 if none is left (the mutex held).
define internal i32 @irad_claim() alwaysinline {
entry:
  %at_next = call ptr @irad_at(i64 196)
  %at_count = call ptr @irad_at(i64 200)
  %next = load i32, ptr %at_next
  %count = load i32, ptr %at_count
  %left = icmp slt i32 %next, %count
  br i1 %left, label %claim, label %none
claim:
  %next1 = add i32 %next, 1
  store i32 %next1, ptr %at_next
  ret i32 %next
none:
  ret i32 -1
}

; The helper thread: waits for a posted job, runs its unclaimed chunks, says so.
define internal ptr @irad_helper(ptr %unused) {
entry:
  %signals = alloca [128 x i8], align 16  ; sigset_t: signals go to Python's threads
  call i32 @sigfillset(ptr %signals)
  call i32 @pthread_sigmask(i32 0, ptr %signals, ptr null)  ; SIG_BLOCK
  %self = call i64 @pthread_self()
  call i32 @pthread_setname_np(i64 %self, ptr @irad_helper_name)  ; for ps, perf and the tests
  %tid = call i32 @gettid()
  %at_tid = call ptr @irad_at(i64 272)
  store atomic i32 %tid, ptr %at_tid release, align 4
  %mutex = call ptr @irad_at(i64 0)
  %posted = call ptr @irad_at(i64 64)
  %finished = call ptr @irad_at(i64 128)
  %at_phase = call ptr @irad_at(i64 192)
  call i32 @pthread_mutex_lock(ptr %mutex)
  br label %wait
wait:
  %phase = load atomic i32, ptr %at_phase monotonic, align 4
  %is_posted = icmp eq i32 %phase, 1
  br i1 %is_posted, label %attach, label %sleep
sleep:
  call i32 @pthread_cond_wait(ptr %posted, ptr %mutex)
  br label %wait
attach:
  store atomic i32 2, ptr %at_phase monotonic, align 4
  %at_run = call ptr @irad_at(i64 208)
  %run = load ptr, ptr %at_run
  %at_task = call ptr @irad_at(i64 216)
  %task = load ptr, ptr %at_task
  br label %claim
claim:
  %i = call i32 @irad_claim()
  %done = icmp slt i32 %i, 0
  br i1 %done, label %finish, label %work
work:
  call void @irad_add(i64 232)
  call i32 @pthread_mutex_unlock(ptr %mutex)
  call void %run(ptr %task, i32 %i)
  call i32 @pthread_mutex_lock(ptr %mutex)
  br label %claim
finish:
  store atomic i32 3, ptr %at_phase monotonic, align 4
  call i32 @pthread_cond_signal(ptr %finished)
  call i32 @pthread_mutex_unlock(ptr %mutex)
  ; the next product of a gradient follows soon: watch for it a little before
  ; sleeping (waking a sleeping thread took tens of microseconds)
  call void @irad_spin(ptr %at_phase, i32 1, i64 ${HELPER_SPIN})
  call i32 @pthread_mutex_lock(ptr %mutex)
  br label %wait
}

; Spin until the phase at %at is %phase or %cycles cycles have passed.
define internal void @irad_spin(ptr %at, i32 %phase, i64 %cycles) {
entry:
  %start = call i64 @llvm.readcyclecounter()
  %deadline = add i64 %start, %cycles
  br label %loop
loop:
  %now = load atomic i32, ptr %at acquire, align 4
  %there = icmp eq i32 %now, %phase
  br i1 %there, label %done, label %pause
pause:
  call void @irad_pause()
  %time = call i64 @llvm.readcyclecounter()
  %late = icmp uge i64 %time, %deadline
  br i1 %late, label %done, label %loop
done:
  ret void
}

declare i64 @llvm.readcyclecounter()

; A spin's wait: x86's pause, aarch64's yield, else nothing (native/split.py).
define internal void @irad_pause() alwaysinline {
  ${PAUSE}
  ret void
}

; Start the helper (the mutex held): helper state 1, or -1 if it cannot be.
define internal void @irad_start(i32 %pid) cold noinline {
entry:
  %thread = alloca i64
  %err = call i32 @pthread_create(ptr %thread, ptr null, ptr @irad_helper, ptr null)
  %ok = icmp eq i32 %err, 0
  %at_helper = call ptr @irad_at(i64 204)
  br i1 %ok, label %started, label %failed
started:
  %id = load i64, ptr %thread
  call i32 @pthread_detach(i64 %id)
  %at_pid = call ptr @irad_at(i64 224)
  store atomic i32 %pid, ptr %at_pid monotonic, align 4
  store atomic i32 1, ptr %at_helper monotonic, align 4
  ret void
failed:
  store atomic i32 -1, ptr %at_helper monotonic, align 4
  ret void
}

; Keep the helper off the CPU the caller runs on (the mutex held): its
; affinity becomes the caller's minus that CPU. Nothing if switched off, if
; the helper has not said its thread id yet, or if the caller is on the CPU
; the helper was last kept off.
define internal void @irad_keep_off() {
entry:
  %mask = alloca [128 x i8], align 8  ; cpu_set_t: 1024 CPUs
  %at_on = call ptr @irad_at(i64 280)
  %on = load i32, ptr %at_on
  %at_tid = call ptr @irad_at(i64 272)
  %tid = load atomic i32, ptr %at_tid acquire, align 4
  %on1 = icmp ne i32 %on, 0
  %started = icmp ne i32 %tid, 0
  %go = and i1 %on1, %started
  br i1 %go, label %where, label %done
where:
  %cpu = call i32 @sched_getcpu()
  %cpu1 = add i32 %cpu, 1
  %at_last = call ptr @irad_at(i64 276)
  %last = load i32, ptr %at_last
  %moved = icmp ne i32 %cpu1, %last
  %known = icmp ult i32 %cpu, 1024  ; sched_getcpu failed: -1
  %move = and i1 %moved, %known
  br i1 %move, label %keep_off, label %done
keep_off:
  store i32 %cpu1, ptr %at_last
  %got = call i32 @sched_getaffinity(i32 0, i64 128, ptr %mask)
  %read = icmp eq i32 %got, 0
  br i1 %read, label %clear, label %done
clear:
  %byte = lshr i32 %cpu, 3
  %at_byte = getelementptr i8, ptr %mask, i32 %byte
  %bits = load i8, ptr %at_byte
  %low = trunc i32 %cpu to i8
  %shift = and i8 %low, 7
  %bit = shl i8 1, %shift
  %others = xor i8 %bit, -1
  %kept = and i8 %bits, %others
  store i8 %kept, ptr %at_byte
  ; fails (EINVAL) if the caller may run on this CPU alone: the helper stays where it may
  %set = call i32 @sched_setaffinity(i32 %tid, i64 128, ptr %mask)
  call void @irad_add(i64 264)
  br label %done
done:
  ret void
}

define internal void @irad_run_all(ptr %run, ptr %task, i32 %n) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i1, %body ]
  %more = icmp slt i32 %i, %n
  br i1 %more, label %body, label %done
body:
  call void %run(ptr %task, i32 %i)
  %i1 = add i32 %i, 1
  br label %loop
done:
  ret void
}

define void @irad_parallel(ptr %run, ptr %task, i32 %n) {
entry:
  %me = call i32 @getpid()
  %at_helper = call ptr @irad_at(i64 204)
  %at_pid = call ptr @irad_at(i64 224)
  %helper = load atomic i32, ptr %at_helper monotonic, align 4
  %owner = load atomic i32, ptr %at_pid monotonic, align 4
  %running = icmp eq i32 %helper, 1
  %elsewhere = icmp ne i32 %owner, %me
  %foreign = and i1 %running, %elsewhere  ; the parent's helper, in a child forked behind Python's back
  br i1 %foreign, label %alone, label %lock
lock:
  %mutex = call ptr @irad_at(i64 0)
  call i32 @pthread_mutex_lock(ptr %mutex)
  %helper1 = load atomic i32, ptr %at_helper monotonic, align 4
  %unstarted = icmp eq i32 %helper1, 0
  br i1 %unstarted, label %start, label %check
start:
  call void @irad_start(i32 %me)
  br label %check
check:
  %helper2 = load atomic i32, ptr %at_helper monotonic, align 4
  %none = icmp ne i32 %helper2, 1
  br i1 %none, label %unlock_alone, label %free
free:
  %at_phase = call ptr @irad_at(i64 192)
  %phase = load atomic i32, ptr %at_phase monotonic, align 4
  %idle = icmp eq i32 %phase, 0
  br i1 %idle, label %post, label %busy
busy:
  call void @irad_add(i64 256)
  br label %unlock_alone
unlock_alone:
  call i32 @pthread_mutex_unlock(ptr %mutex)
  br label %alone
alone:
  call void @irad_run_all(ptr %run, ptr %task, i32 %n)
  ret void
post:
  %at_run = call ptr @irad_at(i64 208)
  store ptr %run, ptr %at_run
  %at_task = call ptr @irad_at(i64 216)
  store ptr %task, ptr %at_task
  %at_next = call ptr @irad_at(i64 196)
  store i32 0, ptr %at_next
  %at_count = call ptr @irad_at(i64 200)
  store i32 %n, ptr %at_count
  call void @irad_keep_off()
  store atomic i32 1, ptr %at_phase monotonic, align 4
  %posted = call ptr @irad_at(i64 64)
  call i32 @pthread_cond_signal(ptr %posted)
  br label %claim
claim:
  %i = call i32 @irad_claim()
  %left = icmp sge i32 %i, 0
  br i1 %left, label %work, label %claimed
work:
  call void @irad_add(i64 240)
  call i32 @pthread_mutex_unlock(ptr %mutex)
  call void %run(ptr %task, i32 %i)
  call i32 @pthread_mutex_lock(ptr %mutex)
  br label %claim
claimed:
  %phase1 = load atomic i32, ptr %at_phase monotonic, align 4
  %unattached = icmp eq i32 %phase1, 1
  br i1 %unattached, label %take_back, label %wait
take_back:  ; the helper has not woken: the job is withdrawn before it can attach
  call void @irad_add(i64 248)
  br label %done
wait:  ; the helper is running its last chunk: spin a little, then sleep
  call i32 @pthread_mutex_unlock(ptr %mutex)
  call void @irad_spin(ptr %at_phase, i32 3, i64 ${CALLER_SPIN})
  call i32 @pthread_mutex_lock(ptr %mutex)
  br label %check_finished
check_finished:
  %phase2 = load atomic i32, ptr %at_phase monotonic, align 4
  %finished = icmp eq i32 %phase2, 3
  br i1 %finished, label %done, label %sleep
sleep:
  %finished_cond = call ptr @irad_at(i64 128)
  call i32 @pthread_cond_wait(ptr %finished_cond, ptr %mutex)
  br label %check_finished
done:
  store atomic i32 0, ptr %at_phase monotonic, align 4
  call i32 @pthread_mutex_unlock(ptr %mutex)
  ret void
}

; In the child of a fork (Python's os.fork; its only thread): no helper, and
; the mutex and conditions made afresh (another thread may have held them).
define void @irad_split_after_fork() {
  %mutex = call ptr @irad_at(i64 0)
  call i32 @pthread_mutex_init(ptr %mutex, ptr null)
  %posted = call ptr @irad_at(i64 64)
  call i32 @pthread_cond_init(ptr %posted, ptr null)
  %finished = call ptr @irad_at(i64 128)
  call i32 @pthread_cond_init(ptr %finished, ptr null)
  %at_phase = call ptr @irad_at(i64 192)
  store atomic i32 0, ptr %at_phase monotonic, align 4
  %at_helper = call ptr @irad_at(i64 204)
  store atomic i32 0, ptr %at_helper monotonic, align 4
  %at_tid = call ptr @irad_at(i64 272)
  store atomic i32 0, ptr %at_tid monotonic, align 4
  %at_last = call ptr @irad_at(i64 276)
  store i32 0, ptr %at_last
  ret void
}

; Keep the helper off the caller's CPU (%on 1) or not (0: it may run on any
; of the caller's CPUs again), for native/split.py.
define void @irad_split_keep_off(i32 %on) {
entry:
  %mask = alloca [128 x i8], align 8
  %mutex = call ptr @irad_at(i64 0)
  call i32 @pthread_mutex_lock(ptr %mutex)
  %at_on = call ptr @irad_at(i64 280)
  store i32 %on, ptr %at_on
  %at_last = call ptr @irad_at(i64 276)
  store i32 0, ptr %at_last
  %at_tid = call ptr @irad_at(i64 272)
  %tid = load atomic i32, ptr %at_tid acquire, align 4
  %started = icmp ne i32 %tid, 0
  %off = icmp eq i32 %on, 0
  %free = and i1 %started, %off
  br i1 %free, label %anywhere, label %done
anywhere:
  %got = call i32 @sched_getaffinity(i32 0, i64 128, ptr %mask)
  %read = icmp eq i32 %got, 0
  br i1 %read, label %set_it, label %done
set_it:
  %set = call i32 @sched_setaffinity(i32 %tid, i64 128, ptr %mask)
  br label %done
done:
  call i32 @pthread_mutex_unlock(ptr %mutex)
  ret void
}

; Blocks for narrow products on (%on 1) or off (0), for native/split.py.
define void @irad_split_blocks(i32 %on) {
  store atomic i32 %on, ptr @irad_blocks monotonic, align 4
  ret void
}

; The counters, for Python: {helper chunks, caller chunks, taken back, busy, moves}.
define void @irad_split_counts(ptr %out) {
  %mutex = call ptr @irad_at(i64 0)
  call i32 @pthread_mutex_lock(ptr %mutex)
  %from = call ptr @irad_at(i64 232)
  call void @llvm.memcpy.p0.p0.i64(ptr %out, ptr %from, i64 40, i1 false)
  call i32 @pthread_mutex_unlock(ptr %mutex)
  ret void
}

declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)

; ---- loops: rows of a loop nest (native/split_loops.py) ---------------------------------------
; Chunk j of %chunks of an extent: from bound(j) to bound(j + 1), cut on
; multiples of ${ALIGN} (whole vectors); decided by the extent alone.
define internal i64 @irad_bound(i64 %extent, i32 %j, i32 %chunks) alwaysinline {
  %last = icmp sge i32 %j, %chunks
  %jj = sext i32 %j to i64
  %scaled = mul i64 %extent, %jj
  %count = sext i32 %chunks to i64
  %share = udiv i64 %scaled, %count
  %rounded = and i64 %share, -${ALIGN}
  %bound = select i1 %last, i64 %extent, i64 %rounded
  ret i64 %bound
}

; @irad_split_rows(run, task, rows) calls run(task, lo, hi) for the ${CHUNKS}
; chunks lo..hi of rows 0..rows (those not empty), on the caller and the
; helper (@irad_parallel): an outlined loop nest whose rows are independent,
; its captured values in `task`.
%rows_job = type { ptr, ptr, i64 }

define internal void @irad_rows_chunk(ptr %job, i32 %i) {
entry:
  %p0 = getelementptr %rows_job, ptr %job, i32 0, i32 0
  %run = load ptr, ptr %p0
  %p1 = getelementptr %rows_job, ptr %job, i32 0, i32 1
  %task = load ptr, ptr %p1
  %p2 = getelementptr %rows_job, ptr %job, i32 0, i32 2
  %rows = load i64, ptr %p2
  %lo = call i64 @irad_bound(i64 %rows, i32 %i, i32 ${CHUNKS})
  %i1 = add i32 %i, 1
  %hi = call i64 @irad_bound(i64 %rows, i32 %i1, i32 ${CHUNKS})
  %empty = icmp sle i64 %hi, %lo
  br i1 %empty, label %done, label %chunk
chunk:
  call void %run(ptr %task, i64 %lo, i64 %hi)
  br label %done
done:
  ret void
}

define void @irad_split_rows(ptr %run, ptr %task, i64 %rows) {
  %job = alloca %rows_job
  %j0 = insertvalue %rows_job poison, ptr %run, 0
  %j1 = insertvalue %rows_job %j0, ptr %task, 1
  %j2 = insertvalue %rows_job %j1, i64 %rows, 2
  store %rows_job %j2, ptr %job
  call void @irad_parallel(ptr @irad_rows_chunk, ptr %job, i32 ${CHUNKS})
  ret void
}

; ---- products, one copy per element type (native/split.py: ${L} d or s) -----------------------
; @irad_split_${L}gemm takes cblas_${L}gemm's arguments (row-major, as irad calls
; it) and computes C in ${CHUNKS} chunks of rows of C, or of columns if C has
; more columns than rows, each one call of ${GEMM} (bounds on multiples of 16:
; whole vectors for its kernels). The chunks depend on the shape alone.
; Narrow products (which they are, native_split.narrow decides: the rule is
; there alone), through @irad_split_narrow_${L}gemm (the same chunks) and
; @irad_blocked_${L}gemm (C as one chunk on the calling thread): a chunk of
; more than ${SMALL} multiply-adds is computed in blocks of rows of at most
; ${SMALL} (a multiple of 16 rows), one call each: OpenBLAS multiplies those
; with its small-matrix kernels, which neither pack the operands nor zero C
; first, 1.5-3x faster on the MLP's h @ w2 and hT @ dlogits
; (docs/benchmarks.md). The blocks depend on the shape alone.

; the task: cblas's arguments, the number of chunks, 1 if narrow (in blocks)
%task.${L} = type { i32, i32, i32, ${INT}, ${INT}, ${INT}, ${T}, ptr, ${INT}, ptr, ${INT}, ${T}, ptr, ${INT}, i32, i32 }

declare void @${GEMM}(i32, i32, i32, ${INT}, ${INT}, ${INT}, ${T}, ptr, ${INT}, ptr, ${INT}, ${T}, ptr, ${INT})

define internal ${INT} @irad_bound_${L}(${INT} %extent, i32 %j, i32 %chunks) alwaysinline {
  %wide = ${TO_I64} ${INT} %extent to i64
  %bound = call i64 @irad_bound(i64 %wide, i32 %j, i32 %chunks)
  %narrow = ${FROM_I64} i64 %bound to ${INT}
  ret ${INT} %narrow
}

; How many rows of C one call computes, of a chunk of `size` rows (%narrow 1:
; of a narrow product).
define internal ${INT} @irad_block_rows_${L}(i32 %narrow, ${INT} %n, ${INT} %k, ${INT} %size) alwaysinline {
  %on = load atomic i32, ptr @irad_blocks monotonic, align 4
  %both = and i32 %on, %narrow
  %enabled = icmp ne i32 %both, 0
  %nk = mul ${INT} %n, %k
  %positive = icmp sgt ${INT} %nk, 0
  %divisor = select i1 %positive, ${INT} %nk, ${INT} 1
  %most = sdiv ${INT} ${SMALL}, %divisor  ; rows of at most ${SMALL} multiply-adds (no product that may overflow)
  %large = icmp sgt ${INT} %size, %most
  %c1 = and i1 %enabled, %positive
  %blocked = and i1 %c1, %large
  br i1 %blocked, label %blocks, label %whole
blocks:
  %aligned = and ${INT} %most, -${ALIGN}
  %tiny = icmp slt ${INT} %aligned, ${ALIGN}
  %rows = select i1 %tiny, ${INT} ${ALIGN}, ${INT} %aligned
  ret ${INT} %rows
whole:
  ret ${INT} %size
}

define internal void @irad_chunk_${L}(ptr %task, i32 %i) {
entry:
  %p0 = getelementptr %task.${L}, ptr %task, i32 0, i32 0
  %layout = load i32, ptr %p0
  %p1 = getelementptr %task.${L}, ptr %task, i32 0, i32 1
  %ta = load i32, ptr %p1
  %p2 = getelementptr %task.${L}, ptr %task, i32 0, i32 2
  %tb = load i32, ptr %p2
  %p3 = getelementptr %task.${L}, ptr %task, i32 0, i32 3
  %m = load ${INT}, ptr %p3
  %p4 = getelementptr %task.${L}, ptr %task, i32 0, i32 4
  %n = load ${INT}, ptr %p4
  %p5 = getelementptr %task.${L}, ptr %task, i32 0, i32 5
  %k = load ${INT}, ptr %p5
  %p6 = getelementptr %task.${L}, ptr %task, i32 0, i32 6
  %alpha = load ${T}, ptr %p6
  %p7 = getelementptr %task.${L}, ptr %task, i32 0, i32 7
  %a = load ptr, ptr %p7
  %p8 = getelementptr %task.${L}, ptr %task, i32 0, i32 8
  %lda = load ${INT}, ptr %p8
  %p9 = getelementptr %task.${L}, ptr %task, i32 0, i32 9
  %b = load ptr, ptr %p9
  %p10 = getelementptr %task.${L}, ptr %task, i32 0, i32 10
  %ldb = load ${INT}, ptr %p10
  %p11 = getelementptr %task.${L}, ptr %task, i32 0, i32 11
  %beta = load ${T}, ptr %p11
  %p12 = getelementptr %task.${L}, ptr %task, i32 0, i32 12
  %c = load ptr, ptr %p12
  %p13 = getelementptr %task.${L}, ptr %task, i32 0, i32 13
  %ldc = load ${INT}, ptr %p13
  %p14 = getelementptr %task.${L}, ptr %task, i32 0, i32 14
  %chunks = load i32, ptr %p14
  %p15 = getelementptr %task.${L}, ptr %task, i32 0, i32 15
  %narrow = load i32, ptr %p15
  %by_rows = icmp sge ${INT} %m, %n
  %extent = select i1 %by_rows, ${INT} %m, ${INT} %n
  %lo = call ${INT} @irad_bound_${L}(${INT} %extent, i32 %i, i32 %chunks)
  %i1 = add i32 %i, 1
  %hi = call ${INT} @irad_bound_${L}(${INT} %extent, i32 %i1, i32 %chunks)
  %size = sub ${INT} %hi, %lo
  %empty = icmp sle ${INT} %size, 0
  br i1 %empty, label %done, label %split
split:
  br i1 %by_rows, label %rows, label %columns
rows:  ; rows lo..hi of C and of op(A): A's rows, or its columns if transposed; in blocks
  %a_plain = icmp eq i32 %ta, 111
  %step = call ${INT} @irad_block_rows_${L}(i32 %narrow, ${INT} %n, ${INT} %k, ${INT} %size)
  br label %block
block:
  %r = phi ${INT} [ 0, %rows ], [ %r_next, %block_call ]
  %more = icmp slt ${INT} %r, %size
  br i1 %more, label %block_call, label %done
block_call:
  %row = add ${INT} %lo, %r
  %left = sub ${INT} %size, %r
  %short = icmp slt ${INT} %left, %step
  %count = select i1 %short, ${INT} %left, ${INT} %step
  %a_row = mul ${INT} %row, %lda
  %a_offset = select i1 %a_plain, ${INT} %a_row, ${INT} %row
  %a_part = getelementptr ${T}, ptr %a, ${INT} %a_offset
  %c_row = mul ${INT} %row, %ldc
  %c_rows = getelementptr ${T}, ptr %c, ${INT} %c_row
  call void @${GEMM}(i32 %layout, i32 %ta, i32 %tb, ${INT} %count, ${INT} %n, ${INT} %k, ${T} %alpha, ptr %a_part, ${INT} %lda, ptr %b, ${INT} %ldb, ${T} %beta, ptr %c_rows, ${INT} %ldc)
  %r_next = add ${INT} %r, %step
  br label %block
columns:  ; columns lo..hi of C and of op(B): B's columns, or its rows if transposed
  %b_plain = icmp eq i32 %tb, 111
  %b_row = mul ${INT} %lo, %ldb
  %b_offset = select i1 %b_plain, ${INT} %lo, ${INT} %b_row
  %b_part = getelementptr ${T}, ptr %b, ${INT} %b_offset
  %c_columns = getelementptr ${T}, ptr %c, ${INT} %lo
  call void @${GEMM}(i32 %layout, i32 %ta, i32 %tb, ${INT} %m, ${INT} %size, ${INT} %k, ${T} %alpha, ptr %a, ${INT} %lda, ptr %b_part, ${INT} %ldb, ${T} %beta, ptr %c_columns, ${INT} %ldc)
  br label %done
done:
  ret void
}

define void @irad_split_${L}gemm(i32 %layout, i32 %ta, i32 %tb, ${INT} %m, ${INT} %n, ${INT} %k, ${T} %alpha, ptr %a, ${INT} %lda, ptr %b, ${INT} %ldb, ${T} %beta, ptr %c, ${INT} %ldc) {
  call void @irad_chunks_${L}(i32 ${CHUNKS}, i32 0, i32 %layout, i32 %ta, i32 %tb, ${INT} %m, ${INT} %n, ${INT} %k, ${T} %alpha, ptr %a, ${INT} %lda, ptr %b, ${INT} %ldb, ${T} %beta, ptr %c, ${INT} %ldc)
  ret void
}

define void @irad_split_narrow_${L}gemm(i32 %layout, i32 %ta, i32 %tb, ${INT} %m, ${INT} %n, ${INT} %k, ${T} %alpha, ptr %a, ${INT} %lda, ptr %b, ${INT} %ldb, ${T} %beta, ptr %c, ${INT} %ldc) {
  call void @irad_chunks_${L}(i32 ${CHUNKS}, i32 1, i32 %layout, i32 %ta, i32 %tb, ${INT} %m, ${INT} %n, ${INT} %k, ${T} %alpha, ptr %a, ${INT} %lda, ptr %b, ${INT} %ldb, ${T} %beta, ptr %c, ${INT} %ldc)
  ret void
}

define void @irad_blocked_${L}gemm(i32 %layout, i32 %ta, i32 %tb, ${INT} %m, ${INT} %n, ${INT} %k, ${T} %alpha, ptr %a, ${INT} %lda, ptr %b, ${INT} %ldb, ${T} %beta, ptr %c, ${INT} %ldc) {
  call void @irad_chunks_${L}(i32 1, i32 1, i32 %layout, i32 %ta, i32 %tb, ${INT} %m, ${INT} %n, ${INT} %k, ${T} %alpha, ptr %a, ${INT} %lda, ptr %b, ${INT} %ldb, ${T} %beta, ptr %c, ${INT} %ldc)
  ret void
}

; C in %chunks chunks: with the helper if more than one, else on the caller;
; in blocks if %narrow is 1.
define internal void @irad_chunks_${L}(i32 %chunks, i32 %narrow, i32 %layout, i32 %ta, i32 %tb, ${INT} %m, ${INT} %n, ${INT} %k, ${T} %alpha, ptr %a, ${INT} %lda, ptr %b, ${INT} %ldb, ${T} %beta, ptr %c, ${INT} %ldc) alwaysinline {
entry:
  %row_major = icmp eq i32 %layout, 101
  br i1 %row_major, label %split, label %whole
whole:  ; irad calls it row-major only; anything else is one call
  call void @${GEMM}(i32 %layout, i32 %ta, i32 %tb, ${INT} %m, ${INT} %n, ${INT} %k, ${T} %alpha, ptr %a, ${INT} %lda, ptr %b, ${INT} %ldb, ${T} %beta, ptr %c, ${INT} %ldc)
  ret void
split:
  %task = alloca %task.${L}
  %t0 = insertvalue %task.${L} poison, i32 %layout, 0
  %t1 = insertvalue %task.${L} %t0, i32 %ta, 1
  %t2 = insertvalue %task.${L} %t1, i32 %tb, 2
  %t3 = insertvalue %task.${L} %t2, ${INT} %m, 3
  %t4 = insertvalue %task.${L} %t3, ${INT} %n, 4
  %t5 = insertvalue %task.${L} %t4, ${INT} %k, 5
  %t6 = insertvalue %task.${L} %t5, ${T} %alpha, 6
  %t7 = insertvalue %task.${L} %t6, ptr %a, 7
  %t8 = insertvalue %task.${L} %t7, ${INT} %lda, 8
  %t9 = insertvalue %task.${L} %t8, ptr %b, 9
  %t10 = insertvalue %task.${L} %t9, ${INT} %ldb, 10
  %t11 = insertvalue %task.${L} %t10, ${T} %beta, 11
  %t12 = insertvalue %task.${L} %t11, ptr %c, 12
  %t13 = insertvalue %task.${L} %t12, ${INT} %ldc, 13
  %t14 = insertvalue %task.${L} %t13, i32 %chunks, 14
  %t15 = insertvalue %task.${L} %t14, i32 %narrow, 15
  store %task.${L} %t15, ptr %task
  %one = icmp eq i32 %chunks, 1
  br i1 %one, label %caller, label %parallel
caller:
  call void @irad_chunk_${L}(ptr %task, i32 0)
  ret void
parallel:
  call void @irad_parallel(ptr @irad_chunk_${L}, ptr %task, i32 %chunks)
  ret void
}
