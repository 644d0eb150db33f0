"""The attack suite: one module per class of hostile input or failure (issue "Nothing lost, nothing run").

Each case asserts a clear refusal (a one-line message and the documented exit code), a consistent store
and unchanged board rows.  The classes and where they are tested:

* board moves, rescore on other data, SIGKILL at every step of rescore and submit: ``test_board_pointer``
* silent sample data, data roots named: ``test_sample_data``
* code beside a spec (never imported without the operator's word): ``tests/test_components_allowed.py``
* look-alike team names (Unicode confusables): ``test_confusables`` (and ``tests/test_untrusted_names.py``)
* attempt slots after crashes and kills: ``test_attempt_slots`` (races: ``tests/test_submissions_quotas.py``)
* sizes: metadata ``test_metadata_limits``; archives ``test_archives``; judge replies ``test_judge_limits``;
  prediction files ``tests/test_untrusted_predictions.py``
* templates (sandbox escapes, render time): ``test_templates``
* paths and trust in the cache (planted plans, links out of the data root): ``test_cache_trust``, ``test_fetch``
* fetch against a loopback mirror (deadline, redirect loops): ``test_fetch``
* judge against a loopback fake (first permanent failure stops): ``test_judge_limits`` (``fake_judge``)
* staging, disk full on a real 1 MiB tmpfs, SIGKILL leftovers: ``test_staging``
* messages naming the user's file, never a temporary path: ``test_user_file_names``
* tracebacks turned into messages (malformed logs, odd uploads, missing stores): ``test_tracebacks``
* hostile specs: ``tests/test_untrusted_specs.py``; TOCTOU between staging and scoring:
  ``tests/test_intake_integrity.py``; concurrent writers: ``tests/test_store_concurrency.py``
"""
