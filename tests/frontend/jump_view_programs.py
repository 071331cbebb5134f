"""Programs that write into an array after an `if` whose other arms jump out
(return, break, continue), in every combination; and programs whose jumping
arm shares arrays differently from the path that goes on. Each runs as plain
numpy too (tests/frontend/test_jump_views.py)."""

import numpy as np


# ---- writable after the arms that jump: the path that goes on copied ------------------
def return_or_break_then_write(x, B):
    # the fuzzer's case_4bb5004854dd: the first arm breaks or returns
    j = 0
    while j < 3:
        j += 1
        if x > 5.0:
            if x > 6.0:
                break
            return np.sum(B)
        else:
            B = np.copy(B.T)
        B *= x
    return np.sum(B) * x


def return_or_continue_then_write(x, B):
    for i in range(3):
        if x < -1.0:
            if x < -2.0:
                continue
            return np.sum(B) * x
        else:
            B = np.copy(B) * x
        B *= 2.0
    return np.sum(B * B)


def nested_loops_break_or_continue(x, B):
    total = 0.0
    for i in range(2):
        C = B * 1.0
        j = 0
        while j < 2:
            j += 1
            if x > 10.0:
                if x > 11.0:
                    continue
                break
            elif x > 20.0:
                return total
            else:
                C = np.copy(C * x)
            C *= 1.5
            total += np.sum(C)
    return total


def every_arm_of_a_chain_jumps_but_one(x, B):
    k = 0
    while k < 4:
        k += 1
        if x > 3.0:
            break
        elif x > 2.0:
            if x > 2.5:
                continue
            return 0.0
        else:
            B = B.T.copy()
        B[0] = x * B[1]
    return np.sum(B * B)


# ---- a jumping arm's sharing reaches the loop's exit or next iteration ----------------
def break_leaves_alias(x, A0):
    A = np.copy(A0)
    B = np.zeros(3)
    j = 0
    while j < 3:
        j += 1
        if x > 0.0:
            B = A
            break
        B = B + 1.0
    B[0] = x
    return np.sum(A * A)


def continue_leaves_alias(x, A0):
    A = np.copy(A0)
    B = np.zeros(3)
    for i in range(3):
        B[1] = x * B[1] + 1.0
        if x > 0.0:
            B = A
            continue
        B = B + 1.0
    return np.sum(A * A)


def unrolled_break_leaves_alias(x, A0):
    A = np.copy(A0)
    B = np.zeros(3)
    for w in (1.0, 2.0):
        if x > w:
            B = A
            break
    B[0] = x
    return np.sum(A * A)


def unrolled_continue_leaves_alias(x, A0):
    A = np.copy(A0)
    B = np.zeros(3)
    for w in (1.0, 2.0):
        B[2] = x * w
        if x > 0.0:
            B = A
            continue
        B = B * w
    return np.sum(A * A)


def break_alias_not_written_after(x, A0):
    # the alias on the break path is never written through: no refusal
    A = np.copy(A0)
    B = np.zeros(3)
    j = 0
    while j < 3:
        j += 1
        if x > 0.0:
            B = A
            break
        B = B + x
    return np.sum(A * B)


def break_alias_then_written_in_the_loop(x, A0):
    # the alias a `break` makes ends the loop: the next iteration's write is fine
    A = np.copy(A0)
    best = np.zeros(3)
    for i in range(10):
        A -= 0.1 * A * x
        if np.sum(A) < x:
            best = A
            break
    return np.sum(best * best) + np.sum(A)


def break_alias_written_after(x, A0):
    A = np.copy(A0)
    best = np.zeros(3)
    for i in range(10):
        A -= 0.1 * A * x
        if np.sum(A) < x:
            best = A
            break
    best[0] = x
    return np.sum(A * A)


WRITABLE = [return_or_break_then_write, return_or_continue_then_write, nested_loops_break_or_continue,
            every_arm_of_a_chain_jumps_but_one, break_alias_not_written_after, break_alias_then_written_in_the_loop]
SHARED_ON_A_JUMP = [break_leaves_alias, continue_leaves_alias, unrolled_break_leaves_alias,
                    unrolled_continue_leaves_alias, break_alias_written_after]
