"""What the tests share: imported as ``harness.<module>``, never from another test module.

- ``dsh_under_test``: the dsh every child runs (this checkout's), prepared by the root conftest
- ``pty_util``, ``vt_screen``: the installed dsh in a pseudo-terminal, and what it shows
- ``mcp_util``, ``mcp_http``, ``tasks_wire``, ``batches``: ``dsh mcp`` over stdio (the SDK's
  client), over HTTP, raw JSON-RPC for its tasks, and batches that press on its budgets
- ``oauth_login``: the OAuth-protected server of the login tests and the dsh commands they run
- ``acp_client``: the SDK's ACP client driving ``dsh acp``
- ``acp_shared``: one ``dsh acp`` child held open for a module's tests, a session each
- ``web_site``: a live web host's HTTP client and waiter
- ``jsonl_controller``, ``relay_wire``, ``ownership_frames``: the controller's end of the
  JSON-lines protocol (a child, an in-process relay) and the frames that settle something
- ``terminal_session``: a real ``TerminalProvider`` on a terminal of a fixed size
- ``postgres``: a throwaway PostgreSQL cluster (the hub's tests and ``bench/hub.py``)
- ``hub_serve``, ``shared_hub``, ``hub_desk``: ``dsh hub serve`` children (one a module where
  the process is incidental), and the hub's desk endpoint in process
- ``http_fake``: one fake MCP server over HTTP a module, where a run's server is incidental
- ``conversation``: what the model requires of a stored conversation
- ``stored_session``: the latest stored session's messages, read without a ``dsh`` child
- ``hostile_text``, ``model_faults``: text that tries to drive a terminal, and a model server
  that misbehaves, with the checks each calls for
"""
