// Token renewal in a real n8n 2.41.1: the cases are in cases/renewal.ts (also run against n8n 1.x by n8n-1x.e2e.ts).
import { describeRenewal } from './cases/renewal.cts';

describeRenewal('2.x');
