/**
 * `npm start` resumes the issuance jobs that were running when the stack last stopped: SQS keeps a
 * job's messages in AWS, but the local stand-in keeps them only across a clean stop (its state
 * file), not across a killed process. Each running job gets its start message again: the worker
 * sends the chunks not yet recorded on the job (its progress is in DynamoDB), and a chunk that an
 * earlier run wrote in part finds its own codes again (functions/codes/issuance-job-codes.ts), so
 * nothing is written twice. Loaded after the stack has set the environment (table names, queues).
 */
export async function resumeIssuanceJobs(log: (line: string) => void): Promise<void> {
  const { runningIssuanceJobs } = await import('../functions/data/issuance-jobs.ts');
  const { sendJobStart } = await import('../functions/codes/issuance-job-messages.ts');
  const jobs = await runningIssuanceJobs();
  for (const job of jobs) await sendJobStart(job.account_id, job.id, 0);
  if (jobs.length > 0) log(`Resumed ${jobs.length} running issuance job${jobs.length === 1 ? '' : 's'}: ${jobs.map((job) => job.id).join(', ')}`);
}
