# python3 tools/chunk-writes.py URL TAG [N] — paired check of the chunk lifecycle's write cost (no embedding): _bulk of N documents through a pipeline with
# embed: false into a fresh index, then a rewrite of every document with fewer parents; prints seconds per phase.
import json, sys, time, urllib.request
url = sys.argv[1]; tag = sys.argv[2]; n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
words = open(__import__('os').path.join(__import__('os').path.dirname(__file__), '..', 'src/test/resources/eval/datasets/gutenqa-emma/book.txt')).read().split()
def call(method, path, body=None, nd=False):
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url + path, data=data, method=method,
        headers={'Content-Type': 'application/x-ndjson' if nd else 'application/json'})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read() or b'{}')
idx = 'nb-' + tag
call('PUT', '/_ingest/pipeline/' + idx, {"processors": [{"multi_granular_chunking": {"field": "body", "target_index": idx + "-chunks",
    "embed": False, "strategy": {"type": "recursive", "max_words": 40}}}]})
def run(size):
    t = time.time()
    for b in range(0, n, 100):
        lines = []
        for i in range(b, min(n, b + 100)):
            off = (i * 37) % (len(words) - size)
            lines.append(json.dumps({"index": {"_index": idx, "_id": "d%d" % i}}))
            lines.append(json.dumps({"body": " ".join(words[off:off + size])}))
        r = call('POST', '/_bulk?pipeline=' + idx, ("\n".join(lines) + "\n").encode(), nd=True)
        assert not r.get('errors'), json.dumps(r)[:500]
    return time.time() - t
a = run(400)   # 10 parents each
b = run(80)    # rewrite: 2 parents each, 8 cleaned up
call('POST', '/' + idx + '-chunks/_refresh')
c = call('GET', '/' + idx + '-chunks/_count')['count']
print("%s: write %.1f s, rewrite %.1f s, chunk docs %d" % (tag, a, b, c))
