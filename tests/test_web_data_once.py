"""The build's kernels write each lab's data scripts once: two labs that read the same
scripts (chapter 8's ``training`` and ``generation``) export them once per folder, and a
script deleted since is written again."""

from attention_book.controls import web as W


def test_labs_sharing_data_scripts_export_them_once(tmp_path, monkeypatch):
    calls = []

    def writer(folder):
        calls.append(folder)
        (folder / "shared.js").write_text("/* data */")

    monkeypatch.setattr(W, "DATA", {"one": (("shared.js",), writer),
                                     "two": (("shared.js",), writer)})
    monkeypatch.setattr(W, "_WRITTEN", set())
    first = W.write_data("one", tmp_path / "a")
    assert W.write_data("two", tmp_path / "a") == first == (tmp_path / "a" / "shared.js",)
    assert calls == [tmp_path / "a"]
    W.write_data("two", tmp_path / "b")  # another folder: written there too
    assert calls == [tmp_path / "a", tmp_path / "b"]
    first[0].unlink()  # gone since: written again
    W.write_data("one", tmp_path / "a")
    assert len(calls) == 3 and first[0].is_file()
    assert W.write_data("no data", tmp_path / "a") == () and len(calls) == 3
