import pickle

from lockgate.engine.io.record_chunks import CHUNK_RECORDS, pickled_in_chunks, unpickled_chunks


def test_records_come_back_from_their_chunks_in_order():
    records = [(i % 7, f"r{i}") for i in range(2 * CHUNK_RECORDS + 3)]

    assert unpickled_chunks(pickled_in_chunks(records)) == records


def test_each_chunk_pickles_at_most_chunk_records():
    chunks = pickled_in_chunks(list(range(2 * CHUNK_RECORDS + 3)))

    assert [len(pickle.loads(chunk)) for chunk in chunks] == [CHUNK_RECORDS, CHUNK_RECORDS, 3]


def test_no_records_make_no_chunks():
    assert (pickled_in_chunks([]), unpickled_chunks(())) == ((), [])
