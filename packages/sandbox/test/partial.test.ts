// Metadata-only answers (PartialObjectMetadata), as kube-apiserver v1.37.2 gives them (the
// shared e2e suite, test/e2e/resources-more.e2e.ts, checks the same on both targets): a LIST
// asks for the List and a GET or WATCH for the object, the other one is 406; v1beta1 works;
// an unknown version is 406 unless a later alternative is acceptable; a WATCH asked for the
// List ends at its first event with nothing sent.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSandbox, type Sandbox } from "../src/index.ts";
import { api, CM, cm, WatchReader } from "./helpers.ts";

const PARTIAL = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
const PARTIAL_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox();
  await api(sb, "POST", CM, { ...cm("probe", { a: "b" }), metadata: { name: "probe", labels: { a: "b" }, annotations: { x: "y" } } });
});
afterAll(() => sb.stop());

const get = async (path: string, accept: string) => {
  const response = await fetch(sb.url + path, { headers: { accept } });
  return { status: response.status, body: (await response.json()) as any };
};

describe("PartialObjectMetadata", () => {
  test("a LIST asked for PartialObjectMetadataList: meta.k8s.io/v1 kinds, items with metadata only, the list's resourceVersion", async () => {
    const { status, body } = await get(`${CM}?limit=1`, PARTIAL_LIST);
    expect(status).toBe(200);
    expect([body.kind, body.apiVersion, typeof body.metadata.resourceVersion]).toEqual(["PartialObjectMetadataList", "meta.k8s.io/v1", "string"]);
    expect(Object.keys(body.items[0]).sort()).toEqual(["apiVersion", "kind", "metadata"]);
    expect([body.items[0].kind, body.items[0].apiVersion, body.items[0].metadata.name, body.items[0].metadata.labels]).toEqual(["PartialObjectMetadata", "meta.k8s.io/v1", "probe", { a: "b" }]);
  });

  test("a GET asked for PartialObjectMetadata gives the object's metadata; the List kind for one object is 406", async () => {
    const one = await get(`${CM}/probe`, PARTIAL);
    expect([one.status, one.body.kind, one.body.apiVersion, one.body.metadata.annotations, one.body.data]).toEqual([200, "PartialObjectMetadata", "meta.k8s.io/v1", { x: "y" }, undefined]);
    const wrong = await get(`${CM}/probe`, PARTIAL_LIST);
    expect([wrong.status, wrong.body.reason, wrong.body.message]).toEqual([406, "NotAcceptable", "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"]);
  });

  test("a LIST asked for the object kind is 406, worded as kube-apiserver does", async () => {
    const { status, body } = await get(CM, PARTIAL);
    expect([status, body.reason, body.message]).toEqual([406, "NotAcceptable", "you requested PartialObjectMetadata, but the requested object is a list (*core.ConfigMapList)"]);
  });

  test("v1beta1 answers in meta.k8s.io/v1beta1; an unknown version is 406 unless a later alternative is acceptable", async () => {
    const beta = await get(`${CM}?limit=1`, PARTIAL_LIST.replace("v=v1", "v=v1beta1"));
    expect([beta.body.kind, beta.body.apiVersion, beta.body.items[0].apiVersion]).toEqual(["PartialObjectMetadataList", "meta.k8s.io/v1beta1", "meta.k8s.io/v1beta1"]);
    const unknown = await get(CM, PARTIAL_LIST.replace("v=v1", "v=v2"));
    expect([unknown.status, unknown.body.message]).toEqual([406, "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"]);
    const fallback = await get(CM, `${PARTIAL_LIST.replace("v=v1", "v=v2")},application/json`);
    expect([fallback.status, fallback.body.kind]).toEqual([200, "ConfigMapList"]);
  });

  test("a WATCH asked for PartialObjectMetadata: events and the initial-events-end BOOKMARK carry it", async () => {
    const watch = await WatchReader.open(sb, `${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`, { headers: { accept: PARTIAL } });
    try {
      const added = await watch.next();
      expect([added.type, added.object.kind, added.object.apiVersion, added.object.metadata.name, added.object.data]).toEqual(["ADDED", "PartialObjectMetadata", "meta.k8s.io/v1", "probe", undefined]);
      const bookmark = await watch.next();
      expect([bookmark.type, bookmark.object.kind, bookmark.object.apiVersion, bookmark.object.metadata.annotations]).toEqual(["BOOKMARK", "PartialObjectMetadata", "meta.k8s.io/v1", { "k8s.io/initial-events-end": "true" }]);
    } finally {
      watch.close();
    }
  });

  test("a WATCH asked for the List kind answers 200 and ends at its first event, sending nothing", async () => {
    const watch = await WatchReader.open(sb, `${CM}?watch=true&resourceVersion=0`, { headers: { accept: PARTIAL_LIST } });
    expect(watch.res.status).toBe(200);
    expect(await watch.nextLine()).toBeUndefined();
    expect(watch.ended).toBe(true);
  });
});
