import express from 'express';
import request from 'supertest';
import { httpMetrics } from './middleware';
import { createApiMetrics } from './registry';

/** An app answering each status it is asked for, counted by the metrics middleware. */
function teapotApp() {
  const metrics = createApiMetrics();
  const app = express();
  app.use(httpMetrics(metrics));
  app.get('/status/:code', (req, res) => {
    res.status(Number(req.params.code)).end();
  });
  return { app, metrics };
}

const series = (status: string, cls: string) =>
  `switchboard_http_requests_total{method="GET",route="/status/:code",status_class="${cls}",status="${status}"} 1`;

test('the request count carries the exact status of an answer the API gives', async () => {
  const { app, metrics } = teapotApp();
  await request(app).get('/status/409').expect(409);
  await request(app).get('/status/412').expect(412);
  const text = await metrics.registry.metrics();
  expect(text).toContain(series('409', '4xx'));
  expect(text).toContain(series('412', '4xx'));
});

test('a status the API never answers is folded into "other", keeping its class', async () => {
  const { app, metrics } = teapotApp();
  await request(app).get('/status/418').expect(418);
  await request(app).get('/status/599').expect(599);
  const text = await metrics.registry.metrics();
  expect(text).toContain(series('other', '4xx'));
  expect(text).toContain(series('other', '5xx'));
  expect(text).not.toMatch(/status="(418|599)"/);
});
