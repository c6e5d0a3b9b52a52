"""An ingress split's log: positions, what it holds, and the senders waiting for a commit."""

from __future__ import annotations

from lockgate.connectors.service.ingress_log import CommitTicket, IngressLog


def log_of(*records: int) -> IngressLog[int]:
    log: IngressLog[int] = IngressLog("ingress-0")
    for record in records:
        log.append(record)
    return log


def test_records_are_read_in_the_order_they_were_accepted_from_the_read_position():
    log = log_of(1, 2, 3)

    assert log.take(2) == (0, [1, 2])
    assert log.take(5) == (2, [3])
    assert (log.unread, log.held) == (0, 3)


def test_a_log_holds_what_was_read_until_a_commit_covers_it():
    log = log_of(1, 2, 3)
    log.take(3)

    log.commit_to(2)

    assert (log.held_from, log.held) == (2, 1)


def test_a_rewind_reads_again_what_is_still_held():
    log = log_of(1, 2, 3)
    log.take(3)
    log.commit_to(1)

    log.rewind(0)  # an older snapshot: records before the oldest held are gone

    assert log.take(5) == (1, [2, 3])


def test_a_rewind_past_the_end_starts_the_log_over_there():
    log = log_of(1)

    log.rewind(40)  # a savepoint of another history, restored into this log
    position = log.append(9)

    assert (position, log.held_from, log.take(1)) == (40, 40, (40, [9]))


async def test_a_commit_resolves_the_tickets_of_the_records_it_covers_in_order():
    log = log_of(1)
    first, second = CommitTicket(), CommitTicket()
    log.wait_for(log.append(2), first)
    log.wait_for(log.append(3), second)
    log.take(3)

    log.commit_to(2)
    await first.wait_committed()

    assert log.fail_tickets(lambda: RuntimeError("attempt ended")) == 1


def test_a_log_that_does_not_hold_lets_records_go_once_read():
    log = log_of(*range(3000))
    log.take(2500)

    log.release_to(log.read)

    assert (log.held_from, log.held, log.take(10)) == (2500, 500, (2500, list(range(2500, 2510))))
