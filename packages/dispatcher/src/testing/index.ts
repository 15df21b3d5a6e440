// @openprogram/dispatcher/testing: helpers for testing against a running dispatcher.
export { TestClient, type FrameOf } from "./test-client.js";
