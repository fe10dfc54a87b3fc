// The Companion Push node's actions in a real n8n 2.41.1: the cases are in cases/actions.ts (also run against n8n 1.x by n8n-1x.e2e.ts).
import { describeActions } from './cases/actions.cts';

describeActions('2.x');
