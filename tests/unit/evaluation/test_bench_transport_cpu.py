"""``bench/transport.py`` reads a server's CPU as ``/proc/<pid>/stat`` splits it: user and
system time apart (the system share is the pipe I/O a transport change moves)."""

from __future__ import annotations

import os

from bench.transport import CLK_TCK, CpuPerCall, cpu_s, cpu_times


def test_user_and_system_time_are_read_apart_after_the_command_name():
    # a command name holding ") " and spaces: the fields count from its last ")"
    stat = f"4242 (dsh (x) y) S 1 4242 4242 0 -1 4194304 2516 0 0 0 {3 * CLK_TCK} {CLK_TCK // 2} 0 0 20 0 3 0 1"
    assert cpu_times(stat) == (3.0, (CLK_TCK // 2) / CLK_TCK)


def test_this_process_times_are_its_own_user_and_system_seconds():
    user, system = cpu_s(os.getpid())
    times = os.times()
    assert 0 <= user <= times.user + 1 / CLK_TCK
    assert 0 <= system <= times.system + 1 / CLK_TCK


def test_cpu_per_call_totals_its_two_parts():
    assert CpuPerCall(user=41.0, system=9.0).total == 50.0
